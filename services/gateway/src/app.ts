import express, { type Express } from 'express';
import type { Logger } from '@conveyor/logger';
import { createMetricsRegistry, httpMetrics, metricsRouter, type Registry } from '@conveyor/metrics';
import { errorHandler, healthRoutes, notFoundHandler, requestContext, type Readiness } from '@conveyor/runtime';
import type { GatewayConfig } from './config';
import type { ConsoleSessions } from './console/console-sessions';
import { identify, requireAuth } from './middleware/authenticate';
import type { OrchestratorApi } from './orchestrator-api';
import { artifactRoutes } from './routes/artifact-routes';
import { blobRoutes } from './routes/blob-routes';
import { harnessSupportRoutes } from './routes/harness-support-routes';
import { runScoringRoutes } from './routes/run-scoring-routes';
import { workerRoutes } from './routes/worker-routes';
import { runInspectionRoutes } from './routes/run-inspection-routes';
import { runLifecycleRoutes } from './routes/run-lifecycle-routes';
import { runListRoutes } from './routes/run-list-routes';
import { scheduleRoutes } from './routes/schedule-routes';
import { webhookAutomationRoutes } from './routes/webhook-automation-routes';
import { webhookFactoryRoutes } from './routes/webhook-factory-routes';
import { webhookRoutes } from './routes/webhook-routes';
import { webhookSecretRoutes } from './routes/webhook-secret-routes';
import { catalogRoutes } from './routes/catalog-routes';
import { environmentRoutes } from './routes/environment-routes';
import { identityRoutes } from './routes/identity-routes';
import { consoleRoutes } from './routes/console-routes';

/** The public REST API: health at the root, everything else under /v1 behind API-key auth; the web console under /console. */
export function buildApp(deps: {
  config: GatewayConfig;
  logger: Logger;
  api: OrchestratorApi;
  readiness: Readiness;
  consoleSessions: ConsoleSessions;
  metrics?: Registry;
}): Express {
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
  // Public artifacts are readable without a key (private ones check the caller identified above).
  v1.use(artifactRoutes(deps.api));
  v1.use(requireAuth);
  v1.use(harnessSupportRoutes(deps.api));
  v1.use(runScoringRoutes(deps.api));
  v1.use(workerRoutes(deps.api));
  v1.use(runListRoutes(deps.api));
  v1.use(runInspectionRoutes(deps.api));
  v1.use(runLifecycleRoutes(deps.api));
  v1.use(scheduleRoutes(deps.api));
  v1.use(webhookFactoryRoutes(deps.api));
  v1.use(webhookRoutes(deps.api));
  v1.use(webhookAutomationRoutes(deps.api));
  v1.use(webhookSecretRoutes(deps.api));
  v1.use(catalogRoutes(deps.api));
  v1.use(environmentRoutes(deps.api));
  v1.use(identityRoutes(deps.api));
  app.use('/v1', v1);
  app.use('/api/v1', v1);
  app.use('/console', consoleRoutes({ api: deps.api, sessions: deps.consoleSessions, sessionTtlSeconds: deps.config.CONSOLE_SESSION_TTL_SECONDS, v1 }));

  app.use(notFoundHandler);
  app.use(errorHandler());
  return app;
}
