import type { PrismaClient } from '@conveyor/db';
import type { Logger } from '@conveyor/logger';
import type { Readiness } from '@conveyor/runtime';
import { artifactLinkSigner } from '../blobs/configured-blob-store';
import type { OrchestratorConfig } from '../config';
import { planGitFetch } from '../egress/git-egress';
import { artifactHandlers } from '../grpc/handlers/artifact-handlers';
import { authHandlers } from '../grpc/handlers/auth-handlers';
import { blobHandlers } from '../grpc/handlers/blob-handlers';
import { catalogHandlers } from '../grpc/handlers/catalog-handlers';
import { eventEndpointHandlers } from '../grpc/handlers/event-endpoint-handlers';
import { factoryHandlers } from '../grpc/handlers/factory-handlers';
import { healthHandlers } from '../grpc/handlers/health-handlers';
import { identityHandlers } from '../grpc/handlers/identity-handlers';
import { integrationHandlers } from '../grpc/handlers/integration-handlers';
import { runHandoffHandlers } from '../grpc/handlers/run-handoff-handlers';
import { runInsightsHandler } from '../grpc/handlers/run-insights-handler';
import { runLifecycleHandlers } from '../grpc/handlers/run-lifecycle-handlers';
import { runQueryHandlers } from '../grpc/handlers/run-query-handlers';
import { runnerHandlers } from '../grpc/handlers/runner-handlers';
import { scheduleHandlers } from '../grpc/handlers/schedule-handlers';
import { watchRunEvents } from '../grpc/handlers/watch-run-events';
import { webhookIngressHandlers } from '../grpc/handlers/webhook-ingress-handlers';
import { WorkerHub } from '../grpc/handlers/worker-hub';
import { executionTranscriptKey, TRANSCRIPT_CONTENT_TYPE } from '../runs/transcript';
import type { OutsideWorld } from './adapters';
import type { Domain } from './domain';

export interface HandlerDeps {
  config: OrchestratorConfig;
  logger: Logger;
  readiness: Readiness;
  db: PrismaClient;
  outside: OutsideWorld;
  domain: Domain;
}

/** Every RPC, mapped onto the domain built before it; the domain knows nothing about gRPC. */
export function grpcHandlers({ config, logger, readiness, db, outside, domain }: HandlerDeps) {
  const { blobs, cipher, egress, github, linear, slack } = outside;
  const { runQueue, catalog, appTokens } = domain;
  const links = {
    secret: config.BLOB_SIGNING_SECRET,
    baseUrl: config.PUBLIC_API_BASE_URL,
    ttlSeconds: config.BLOB_URL_TTL_SECONDS,
  };
  const sign = artifactLinkSigner(blobs, config);
  const workerHub = new WorkerHub(db, domain.workerDispatch, logger.child({ component: 'worker-hub' }), {
    heartbeatIntervalMs: config.WORKER_HEARTBEAT_INTERVAL_MS,
    staleAfterMs: config.WORKER_STALE_AFTER_MS,
  });
  const webhookHandlerDeps = {
    db,
    cipher,
    versions: domain.webhookVersions,
    webhookBaseUrl: config.WEBHOOK_BASE_URL,
    logger,
  };
  return {
    auth: authHandlers({ db, logger }),
    health: healthHandlers({ readiness, logger }),
    runs: {
      ...runQueryHandlers({ db, logger, blobs, links }),
      ...runLifecycleHandlers({
        ...domain.runDeps,
        logger,
        queue: runQueue,
        workerStaleAfterMs: config.WORKER_STALE_AFTER_MS,
      }),
      ...runHandoffHandlers({ db, logger, blobs, sign, ttlSeconds: config.BLOB_URL_TTL_SECONDS }),
      WatchRunEvents: watchRunEvents({ db, feed: domain.runEventFeed, logger }),
      ...runInsightsHandler({
        db,
        logger,
        poolRunners: () => runQueue.connectedRunners(),
        workerStaleAfterMs: config.WORKER_STALE_AFTER_MS,
      }),
    },
    runner: runnerHandlers({
      db,
      logger,
      debugWindowMinutes: config.FAILURE_SESSION_RETENTION_MINUTES,
      leaseExpiryMs: config.RUN_LEASE_EXPIRY_MS ?? config.RUNNER_LOST_AFTER_MS / 2,
      // Twice the lost-runner bound: by then the sweeper ended or requeued it, so a run still running has no taker.
      abandonedAfterMs: config.RUNNER_LOST_AFTER_MS * 2,
      apiBaseUrl: config.PUBLIC_API_BASE_URL,
      cipher,
      models: catalog.models,
      sessions: domain.sessions,
      planFetch: (url) => planGitFetch(url, egress),
      github,
      appTokens,
      githubAppReports: domain.githubAppReports,
      linearReports: domain.linearReports,
      publicApiBaseUrl: config.PUBLIC_API_BASE_URL,
      saveTranscript: async (runId, execution, transcript) => {
        await blobs.put(executionTranscriptKey(runId, execution), transcript, TRANSCRIPT_CONTENT_TYPE);
        logger.info({ runId, execution, bytes: transcript.length }, 'transcript stored');
      },
    }),
    blobs: blobHandlers({
      blobs,
      secrets: [config.BLOB_SIGNING_SECRET, ...config.BLOB_SIGNING_PREVIOUS_SECRETS],
      logger,
    }),
    artifacts: artifactHandlers({ db, blobs, sign, ttlSeconds: config.BLOB_URL_TTL_SECONDS, logger }),
    factories: factoryHandlers({ ...webhookHandlerDeps, providers: { github, slack, linear } }),
    webhookIngress: webhookIngressHandlers(webhookHandlerDeps),
    schedules: scheduleHandlers({
      db,
      ticks: domain.schedules.ticks,
      logger: logger.child({ component: 'schedules' }),
    }),
    ...workerHub.grpcHandlers(),
    catalog: catalogHandlers({
      environments: catalog.environments,
      guests: catalog.guests,
      skills: catalog.skills,
      models: catalog.models,
      logger,
    }),
    identities: identityHandlers({ identities: domain.identities, keys: domain.identityKeys, logger }),
    events: eventEndpointHandlers({
      db,
      cipher,
      urls: outside.eventUrls,
      secretGraceMs: config.EVENT_SECRET_GRACE_MS,
      logger,
      eventsChanged: () => void domain.events.kick(),
    }),
    integrations: integrationHandlers({
      ...webhookHandlerDeps,
      github,
      linear,
      forgetTokens: (id) => domain.installationTokens.forget(id),
      slack,
    }),
  };
}
