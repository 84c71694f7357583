import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { Counter, Histogram, type Registry } from 'prom-client';
import { getOrCreate } from './get-or-create';

export const HTTP_REQUESTS_TOTAL = 'http_requests_total';
export const HTTP_REQUEST_ERRORS_TOTAL = 'http_request_errors_total';
export const HTTP_REQUEST_DURATION_SECONDS = 'http_request_duration_seconds';

/** Label for requests answered before any route matched (404s, auth failures ahead of routing). */
export const UNMATCHED_ROUTE = 'unmatched';
/** Status label for requests whose client went away before a response was sent. */
export const ABORTED_STATUS = 'aborted';

/** Probe and scrape traffic would drown the API's own numbers. */
const DEFAULT_IGNORED_PATHS = ['/healthz', '/readyz', '/readyz/local', '/metrics'];

type HttpLabels = 'method' | 'route' | 'status';

export interface HttpMetricsOptions {
  /** Exact paths not recorded; default `/healthz`, `/readyz`, `/readyz/local`, `/metrics`. */
  ignorePaths?: string[];
  /** Histogram buckets in seconds. */
  buckets?: number[];
}

function routePattern(path: unknown): string | undefined {
  if (typeof path === 'string') return path;
  if (Array.isArray(path)) return path.map(String).join('|');
  if (path instanceof RegExp) return String(path);
  return undefined;
}

/**
 * Counts requests and measures latency per matched route pattern (`/v1/agent/runs/:runId`, never the raw URL,
 * so cardinality stays bounded). Mount it first, before any router.
 *
 * The route is captured at the moment the router matches it (express assigns `req.route` then, while
 * `req.baseUrl` is still the mount path), because by the time an error handler answers the router has already
 * restored `baseUrl` and the pattern would lose its prefix.
 */
export function httpMetrics(registry: Registry, options: HttpMetricsOptions = {}): RequestHandler {
  const ignored = new Set(options.ignorePaths ?? DEFAULT_IGNORED_PATHS);
  const requests = getOrCreate(
    registry,
    HTTP_REQUESTS_TOTAL,
    () =>
      new Counter<HttpLabels>({
        name: HTTP_REQUESTS_TOTAL,
        help: 'HTTP requests by method, matched route pattern and status code',
        labelNames: ['method', 'route', 'status'],
        registers: [registry],
      }),
  );
  const errors = getOrCreate(
    registry,
    HTTP_REQUEST_ERRORS_TOTAL,
    () =>
      new Counter<HttpLabels>({
        name: HTTP_REQUEST_ERRORS_TOTAL,
        help: 'HTTP requests answered with a 5xx status or aborted by the client',
        labelNames: ['method', 'route', 'status'],
        registers: [registry],
      }),
  );
  const duration = getOrCreate(
    registry,
    HTTP_REQUEST_DURATION_SECONDS,
    () =>
      new Histogram<HttpLabels>({
        name: HTTP_REQUEST_DURATION_SECONDS,
        help: 'HTTP request latency in seconds, from the first middleware to the last byte',
        labelNames: ['method', 'route', 'status'],
        buckets: options.buckets ?? [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
        registers: [registry],
      }),
  );

  return (req: Request, res: Response, next: NextFunction): void => {
    if (ignored.has(req.path)) return next();
    const started = process.hrtime.bigint();
    let matched: string | undefined;
    let route: unknown = req.route;
    Object.defineProperty(req, 'route', {
      configurable: true,
      enumerable: true,
      get: () => route,
      set: (value: unknown) => {
        route = value;
        const pattern = routePattern((value as { path?: unknown } | undefined)?.path);
        if (pattern !== undefined) matched = `${req.baseUrl}${pattern}`;
      },
    });

    let recorded = false;
    const record = (status: string): void => {
      if (recorded) return;
      recorded = true;
      const labels = { method: req.method, route: matched ?? UNMATCHED_ROUTE, status };
      requests.inc(labels);
      duration.observe(labels, Number(process.hrtime.bigint() - started) / 1e9);
      if (status === ABORTED_STATUS || Number(status) >= 500) errors.inc(labels);
    };
    res.once('finish', () => record(String(res.statusCode)));
    res.once('close', () => record(res.writableFinished ? String(res.statusCode) : ABORTED_STATUS));
    next();
  };
}
