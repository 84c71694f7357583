import { Router, type NextFunction, type Request, type Response } from 'express';
import { AppError } from '@conveyor/errors';
import { parseBody, parseQuery } from '../validation';
import type { Endpoint, EndpointDeps } from './endpoint';

/**
 * A run-scoped key is handed to code running inside a run's sandbox (docs/sandbox.md): it reaches only the endpoints
 * marked `runScopedKey` (harness support, which acts on the key's own run, and judge scoring, checked against the
 * judge's run) — it cannot list, read, create or cancel runs, whatever the role of the principal it acts for.
 */
function confineRunScopedKeys(req: Request, _res: Response, next: NextFunction): void {
  next(
    req.caller?.run_id
      ? new AppError(
          'not_authorized',
          'A run-scoped key may only call the harness-support endpoints of its own run',
        )
      : undefined,
  );
}

/** The express router of a list of endpoints: each one's method and path, its checks, its parsing, its handler. */
export function endpointRouter(endpoints: readonly Endpoint[], deps: EndpointDeps): Router {
  const router = Router();
  for (const e of endpoints) {
    const checks = e.runScopedKey ? [] : [confineRunScopedKeys];
    router[e.method](e.path, ...checks, async (req: Request, res: Response) => {
      const body = e.body ? parseBody(e.body, req.body) : undefined;
      const query = e.readQuery
        ? e.readQuery(req.query as Record<string, unknown>)
        : e.query
          ? parseQuery(e.query, req.query)
          : undefined;
      await e.handle({ ...deps, req, res, body, query });
    });
  }
  return router;
}
