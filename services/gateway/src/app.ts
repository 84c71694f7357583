import express, { type Express } from 'express';
import type { Logger } from '@conveyor/logger';
import { errorHandler, healthRoutes, notFoundHandler, requestContext, type Readiness } from '@conveyor/runtime';
import type { GatewayConfig } from './config';
import { identify, requireAuth } from './middleware/authenticate';
import type { OrchestratorApi } from './orchestrator-api';
import { runsRoutes } from './routes/runs-routes';

/** The public REST API: health at the root, everything else under /v1 behind API-key auth. */
export function buildApp(deps: { config: GatewayConfig; logger: Logger; api: OrchestratorApi; readiness: Readiness }): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', true);
  app.use(requestContext(deps.logger));
  app.use(healthRoutes(deps.readiness));

  const v1 = express.Router();
  // Any content type is parsed as JSON: bodies are JSON by contract, and a wrong header should not turn into {}.
  v1.use(express.json({ limit: deps.config.MAX_BODY_BYTES, type: () => true, strict: false }));
  v1.use(identify(deps.api));
  v1.use(requireAuth);
  v1.use(runsRoutes(deps.api));
  app.use('/v1', v1);
  app.use('/api/v1', v1);

  app.use(notFoundHandler);
  app.use(errorHandler());
  return app;
}
