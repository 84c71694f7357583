import type { Express } from 'express';

interface RouteLayer {
  route?: { path: string | string[]; methods: Record<string, boolean> };
  handle?: { stack?: RouteLayer[] };
  rawPath?: string | string[];
}

/** Every `METHOD path` an express app serves, read from its router stack (mounted routers included). */
export function listRoutes(app: Express): string[] {
  const routes: string[] = [];
  const walk = (stack: RouteLayer[], prefix: string) => {
    for (const layer of stack) {
      if (layer.route) {
        for (const path of [layer.route.path].flat()) {
          for (const method of Object.keys(layer.route.methods).filter((m) => m !== '_all'))
            routes.push(`${method} ${prefix}${path}`);
        }
      } else if (layer.handle?.stack) {
        const mount = typeof layer.rawPath === 'string' && layer.rawPath !== '/' ? layer.rawPath : '';
        walk(layer.handle.stack, prefix + mount);
      }
    }
  };
  walk((app as unknown as { router: { stack: RouteLayer[] } }).router.stack, '');
  return routes;
}
