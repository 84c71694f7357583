import express, { type Express } from 'express';
import type { Logger } from '@conveyor/logger';
import { createMetricsRegistry, httpMetrics, metricsRouter, type Registry } from '@conveyor/metrics';
import { errorHandler, healthRoutes, notFoundHandler, requestContext, type Readiness } from '@conveyor/runtime';
import type { GatewayConfig } from './config';
import { identify, requireAuth } from './middleware/authenticate';
import type { OrchestratorApi } from './orchestrator-api';
import { blobRoutes } from './routes/blob-routes';
import { runInspectionRoutes } from './routes/run-inspection-routes';
import { runLifecycleRoutes } from './routes/run-lifecycle-routes';
import { runListRoutes } from './routes/run-list-routes';

/** The public REST API: health at the root, everything else under /v1 behind API-key auth. */
export function buildApp(deps: { config: GatewayConfig; logger: Logger; api: OrchestratorApi; readiness: Readiness; metrics?: Registry }): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', true);
  const metrics = deps.metrics ?? createMetricsRegistry('gateway');
  app.use(httpMetrics(metrics));
  app.use(requestContext(deps.logger));
  app.use(healthRoutes(deps.readiness));
  app.use(metricsRouter(metrics));

  const v1 = express.Router();
  // Any content type is parsed as JSON: bodies are JSON by contract, and a wrong header should not turn into {}.
  v1.use(express.json({ limit: deps.config.MAX_BODY_BYTES, type: () => true, strict: false }));
  // Signed download links carry their own credential; they are served before API-key auth.
  v1.use(blobRoutes(deps.api));
  v1.use(identify(deps.api));
  v1.use(requireAuth);
  v1.use(runListRoutes(deps.api));
  v1.use(runInspectionRoutes(deps.api));
  v1.use(runLifecycleRoutes(deps.api));
  app.use('/v1', v1);
  app.use('/api/v1', v1);

  app.use(notFoundHandler);
  app.use(errorHandler());
  return app;
}
