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
import { identify, requireAuth } from './middleware/authenticate';
import { jsonBodies } from './middleware/json-bodies';
import { rateLimit } from './middleware/rate-limit';
import { rejectNulCharacters } from './middleware/reject-nul-characters';
import type { OrchestratorApi } from './orchestrator-api';
import { buildApiDocument } from './openapi/api-document';
import { validateResponses } from './openapi/response-validator';
import type { Auth, EndpointDeps } from './routes/endpoint';
import { endpointRouter } from './routes/endpoint-router';
import { ENDPOINTS } from './routes/endpoints';
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

  let document: Record<string, unknown> | undefined;
  const endpointDeps: EndpointDeps = {
    api: deps.api,
    publicUrl: deps.publicUrl,
    githubWebUrl: config.GITHUB_WEB_URL,
    apiDocument: () => (document ??= buildApiDocument()),
  };
  // Each endpoint's `auth` places it in the chain below: that is where its permission is enforced.
  const endpoints = (auth: Auth) =>
    endpointRouter(
      ENDPOINTS.filter((e) => e.auth === auth),
      endpointDeps,
    );

  const v1 = express.Router();
  // Signed download links carry their own credential, and the API document is public: served before API-key auth.
  v1.use(endpoints('none'));
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
  v1.use(
    rateLimit(deps.redis, {
      prefix: config.RATE_LIMIT_REDIS_PREFIX,
      perKey: { points: config.RATE_LIMIT_PER_KEY_POINTS, seconds: config.RATE_LIMIT_PER_KEY_SECONDS },
      perTeam: { points: config.RATE_LIMIT_PER_TEAM_POINTS, seconds: config.RATE_LIMIT_PER_TEAM_SECONDS },
    }),
  );
  // Public artifacts are readable without a key (private ones check the caller identified above); the SDK's
  // redirect checks carry no key and answer anonymous callers for publicly shared sessions only.
  v1.use(endpoints('optional'));
  v1.use(requireAuth);
  // Bodies are read only now, for an authenticated caller within its budget.
  v1.use(jsonBodies(config.MAX_BODY_BYTES));
  v1.use(rejectNulCharacters);
  v1.use(endpoints('api_key'));
  app.use('/v1', v1);
  app.use('/api/v1', v1);
  app.use(
    '/console',
    consoleRoutes({
      api: deps.api,
      keys,
      redis: deps.redis,
      sessionTtlSeconds: config.CONSOLE_SESSION_TTL_SECONDS,
      githubWebUrl: config.GITHUB_WEB_URL,
      v1,
    }),
  );

  app.use(notFoundHandler);
  app.use(errorHandler());
  return app;
}
