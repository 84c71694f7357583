import express, { type Express } from 'express';
import type { Redis } from 'ioredis';
import type { Logger } from '@conveyor/logger';
import { createMetricsRegistry, type Registry } from '@conveyor/metrics';
import {
  authEpochKeys,
  errorHandler,
  notFoundHandler,
  type Readiness,
  serviceShell,
} from '@conveyor/runtime';
import { redisAuthEpochs } from './auth/auth-epochs';
import { KeyAuthenticator } from './auth/key-authenticator';
import type { GatewayConfig } from './config';
import { confineRunScopedKeys, identify, requireAuth } from './middleware/authenticate';
import { jsonBodies } from './middleware/json-bodies';
import { rateLimit } from './middleware/rate-limit';
import { rejectNulCharacters } from './middleware/reject-nul-characters';
import type { OrchestratorApi } from './orchestrator-api';
import { validateResponses } from './openapi/response-validator';
import { artifactRoutes } from './routes/artifact-routes';
import { blobRoutes } from './routes/blob-routes';
import { openapiRoutes } from './routes/openapi-routes';
import { harnessSupportRoutes } from './routes/harness-support-routes';
import { redirectRoutes } from './routes/redirect-routes';
import { runScoringRoutes } from './routes/run-scoring-routes';
import { workerRoutes } from './routes/worker-routes';
import { insightsRoutes } from './routes/insights-routes';
import { runInspectionRoutes } from './routes/run-inspection-routes';
import { runLifecycleRoutes } from './routes/run-lifecycle-routes';
import { runListRoutes } from './routes/run-list-routes';
import { scheduleRoutes } from './routes/schedule-routes';
import { eventEndpointRoutes } from './routes/event-endpoint-routes';
import { integrationRoutes } from './routes/integration-routes';
import { slackAppRoutes } from './routes/slack-app-routes';
import { webhookAutomationRoutes } from './routes/webhook-automation-routes';
import { webhookFactoryRoutes } from './routes/webhook-factory-routes';
import { webhookRoutes } from './routes/webhook-routes';
import { webhookSecretRoutes } from './routes/webhook-secret-routes';
import { catalogRoutes } from './routes/catalog-routes';
import { environmentRoutes } from './routes/environment-routes';
import { identityRoutes } from './routes/identity-routes';
import { consoleRoutes } from './routes/console-routes';

/** The public REST API: health at the root, everything else under /v1 behind API-key auth; the web console under /console. */
export interface AppDeps {
  config: GatewayConfig;
  logger: Logger;
  api: OrchestratorApi;
  redis: Redis;
  readiness: Readiness;
  /** Where users reach this gateway (links in responses); read per request since the port is known after listen. */
  publicUrl: () => string;
  metrics?: Registry;
}

export function buildApp(deps: AppDeps): Express {
  const { config } = deps;
  const app = serviceShell({
    readiness: deps.readiness,
    metrics: deps.metrics ?? createMetricsRegistry('gateway'),
    logger: deps.logger,
    trustProxy: config.TRUST_PROXY,
  });
  if (config.VALIDATE_RESPONSES) app.use(validateResponses());

  const v1 = express.Router();
  // Signed download links carry their own credential; they are served before API-key auth.
  v1.use(blobRoutes(deps.api));
  v1.use(openapiRoutes());
  const keys = new KeyAuthenticator(
    deps.api,
    redisAuthEpochs(
      deps.redis,
      authEpochKeys(config.AUTH_EPOCH_REDIS_PREFIX),
      config.AUTH_CACHE_REDIS_TIMEOUT_MS,
    ),
    {
      maxKeys: config.AUTH_CACHE_MAX_KEYS,
      ttlMs: config.AUTH_CACHE_TTL_SECONDS * 1000,
    },
  );
  deps.redis.on('ready', () => keys.forgetAll());
  v1.use(identify(keys));
  v1.use(confineRunScopedKeys);
  v1.use(
    rateLimit(deps.redis, {
      prefix: config.RATE_LIMIT_REDIS_PREFIX,
      perKey: { points: config.RATE_LIMIT_PER_KEY_POINTS, seconds: config.RATE_LIMIT_PER_KEY_SECONDS },
      perTeam: { points: config.RATE_LIMIT_PER_TEAM_POINTS, seconds: config.RATE_LIMIT_PER_TEAM_SECONDS },
    }),
  );
  // Public artifacts are readable without a key (private ones check the caller identified above).
  v1.use(artifactRoutes(deps.api));
  // The SDK's redirect checks carry no key; they answer anonymous callers for publicly shared sessions only.
  v1.use(redirectRoutes(deps.api));
  v1.use(requireAuth);
  // Bodies are read only now, for an authenticated caller within its budget.
  v1.use(jsonBodies(config.MAX_BODY_BYTES));
  v1.use(rejectNulCharacters);
  v1.use(harnessSupportRoutes(deps.api));
  v1.use(runScoringRoutes(deps.api, deps.publicUrl));
  v1.use(workerRoutes(deps.api));
  v1.use(insightsRoutes(deps.api));
  v1.use(runListRoutes(deps.api, deps.publicUrl));
  v1.use(runInspectionRoutes(deps.api));
  v1.use(runLifecycleRoutes(deps.api, deps.publicUrl));
  v1.use(scheduleRoutes(deps.api));
  v1.use(webhookFactoryRoutes(deps.api));
  v1.use(webhookRoutes(deps.api));
  v1.use(webhookAutomationRoutes(deps.api));
  v1.use(webhookSecretRoutes(deps.api));
  v1.use(eventEndpointRoutes(deps.api));
  v1.use(integrationRoutes(deps.api));
  v1.use(slackAppRoutes(deps.api));
  v1.use(catalogRoutes(deps.api));
  v1.use(environmentRoutes(deps.api));
  v1.use(identityRoutes(deps.api));
  app.use('/v1', v1);
  app.use('/api/v1', v1);
  app.use(
    '/console',
    consoleRoutes({
      api: deps.api,
      keys,
      redis: deps.redis,
      sessionTtlSeconds: config.CONSOLE_SESSION_TTL_SECONDS,
      v1,
    }),
  );

  app.use(notFoundHandler);
  app.use(errorHandler());
  return app;
}
