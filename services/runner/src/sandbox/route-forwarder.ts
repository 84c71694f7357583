import http from 'node:http';
import { AppError, PROBLEM_CONTENT_TYPE, toProblem } from '@conveyor/errors';
import { HOP_BY_HOP } from './hop-by-hop';

/** A method and an exact path pattern an HTTP endpoint forwards; nothing else reaches its target. */
export interface EndpointRoute {
  method: string;
  path: RegExp;
}

const forwardable = (headers: http.IncomingHttpHeaders) =>
  Object.fromEntries(Object.entries(headers).filter(([name]) => !HOP_BY_HOP.has(name)));

function refuse(res: http.ServerResponse, error: AppError, instance: string): void {
  res.writeHead(error.httpStatus, { 'content-type': PROBLEM_CONTENT_TYPE });
  res.end(JSON.stringify(toProblem(error, instance)));
}

/** Forwards one request to an endpoint's target on `path` (already resolved), with `extra` headers set over the request's. */
export type EndpointForwarding = (
  req: http.IncomingMessage,
  res: http.ServerResponse,
  path: string,
  extra?: Record<string, string>,
) => void;

/**
 * Forwarding to `target` of the requests matching `routes` — on the path as the URL parser resolves it (`..`
 * segments gone), which is also the path forwarded — every other one answered 403 `not_authorized` in the
 * contract's problem shape without contacting the target; with no `routes`, every request (the model proxy, which
 * checks each request itself). Hand-written (about 50 lines): the proxies on npm pass the path through as sent.
 */
export function endpointForwarding(
  target: { host: string; port: number },
  routes: readonly EndpointRoute[] | undefined,
  agent: http.Agent,
): EndpointForwarding {
  return (req, res, path, extra = {}) => {
    const url = new URL(path, 'http://endpoint');
    if (routes && !routes.some((r) => r.method === req.method && r.path.test(url.pathname))) {
      req.resume();
      const detail = `${req.method} ${url.pathname} is not reachable from a run`;
      return refuse(res, new AppError('not_authorized', detail), url.pathname);
    }
    const upstream = http.request(
      {
        host: target.host,
        port: target.port,
        method: req.method,
        path: `${url.pathname}${url.search}`,
        headers: { ...forwardable(req.headers), ...extra },
        agent,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, forwardable(answer.headers));
        answer.pipe(res);
      },
    );
    upstream.on('error', () => {
      if (res.headersSent) res.destroy();
      else refuse(res, new AppError('internal_error', 'The platform could not be reached'), url.pathname);
    });
    req.pipe(upstream);
  };
}

/**
 * An HTTP server forwarding `routes` alone to `target` (endpointForwarding). No protocol upgrade passes (its headers
 * are hop-by-hop) and CONNECT has no handler.
 */
export function createRouteForwarder(
  target: { host: string; port: number },
  routes: readonly EndpointRoute[],
): http.Server {
  const agent = new http.Agent({ keepAlive: true });
  const forward = endpointForwarding(target, routes, agent);
  const server = http.createServer((req, res) => forward(req, res, req.url ?? '/'));
  server.on('close', () => agent.destroy());
  return server;
}
