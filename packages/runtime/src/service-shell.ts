import express, { type Express } from 'express';
import type { Server } from 'node:http';
import { trustProxySetting } from '@conveyor/config';
import type { Logger } from '@conveyor/logger';
import { createDependencyUpGauge, httpMetrics, metricsRouter, type Registry } from '@conveyor/metrics';
import { healthRoutes } from './health-routes';
import { listen } from './http-server';
import type { Readiness } from './readiness';
import { requestContext } from './request-context';

export interface ServiceShellOptions {
  readiness: Readiness;
  metrics: Registry;
  /** A service that serves requests of its own logs them with a request ID (requestContext). */
  logger?: Logger;
  /** The TRUST_PROXY setting of a service behind a load balancer (client addresses for rate limits and logs). */
  trustProxy?: string;
}

/**
 * The HTTP shell every service starts from, in this order: request metrics (probes and scrapes left out), the
 * request context, `/healthz` and `/readyz` from the service's Readiness, `/metrics` from its registry (with
 * `conveyor_dependency_up` from the same readiness checks, run at scrape time). The gateway and the ingress mount
 * their routes on it; the orchestrator and the runner serve it alone (startShellServer).
 */
export function serviceShell(options: ServiceShellOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  if (options.trustProxy !== undefined) app.set('trust proxy', trustProxySetting(options.trustProxy));
  app.use(httpMetrics(options.metrics));
  if (options.logger) app.use(requestContext(options.logger));
  app.use(healthRoutes(options.readiness));
  createDependencyUpGauge(options.metrics, () => options.readiness.report());
  app.use(metricsRouter(options.metrics));
  return app;
}

/** The shell alone on its own port (the orchestrator's and the runner's HTTP server). */
export function startShellServer(
  options: ServiceShellOptions & { port: number; host: string },
): Promise<{ server: Server; port: number }> {
  return listen(serviceShell(options), options.port, options.host);
}
