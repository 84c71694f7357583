import type { PrismaClient } from '@conveyor/db';
import type { Logger } from '@conveyor/logger';
import type { Readiness } from '@conveyor/runtime';
import { authenticateApiKey } from '../auth/auth-service';
import { artifactHandlers } from './handlers/artifact-handlers';
import { artifactLinkSigner, configuredBlobStore } from '../blobs/configured-blob-store';
import { blobHandlers } from './handlers/blob-handlers';
import type { OrchestratorConfig } from '../config';
import { runnerHandlers } from './handlers/runner-handlers';
import { HarnessSessions } from '../runner/harness-sessions';
import { EgressPolicy } from '../egress/egress-policy';
import { planGitFetch } from '../egress/git-egress';
import { runLifecycleHandlers } from './handlers/run-lifecycle-handlers';
import type { CreateRunDeps } from '../runs/create-run';
import { runHandoffHandlers } from './handlers/run-handoff-handlers';
import { runQueryHandlers } from './handlers/run-query-handlers';
import type { RunEventFeed } from '../runs/run-event-feed';
import type { RunQueue } from '../runs/run-queue';
import type { SecretCipher } from '../secrets/secret-cipher';
import { watchRunEvents } from './handlers/watch-run-events';
import { executionTranscriptKey, TRANSCRIPT_CONTENT_TYPE } from '../runs/transcript';
import type { OrchestratorHandlers } from './orchestrator-handler-set';
import { unary } from './unary-handler';

export interface HandlerDeps {
  db: PrismaClient;
  readiness: Readiness;
  logger: Logger;
  config: OrchestratorConfig;
  runQueue: RunQueue;
  /** How runs start, shared with automations and schedules. */
  runDeps: CreateRunDeps;
  /** Decrypts team secrets (harness credentials for runners). */
  cipher: SecretCipher;
  /** Wakes WatchRunEvents streams when a run's events are recorded. */
  runEventFeed: RunEventFeed;
}

/** Maps each RPC to its domain function; the domain functions know nothing about gRPC. */
export function orchestratorHandlers({ db, readiness, logger, config, runQueue, runDeps, cipher, runEventFeed }: HandlerDeps): Omit<OrchestratorHandlers, 'factories' | 'webhookIngress' | 'schedules' | 'workers' | 'catalog' | 'identities'> {
  const blobs = configuredBlobStore(db, config);
  const links = { secret: config.BLOB_SIGNING_SECRET, baseUrl: config.PUBLIC_API_BASE_URL, ttlSeconds: config.BLOB_URL_TTL_SECONDS };
  const sign = artifactLinkSigner(blobs, config);
  return {
    auth: {
      Authenticate: unary(logger, 'Authenticate', async (req) => ({ caller: await authenticateApiKey(db, req.api_key) })),
    },
    runs: {
      ...runQueryHandlers({ db, logger, blobs, links }),
      ...runLifecycleHandlers({ ...runDeps, logger, queue: runQueue, workerStaleAfterMs: config.WORKER_STALE_AFTER_MS }),
      ...runHandoffHandlers({ db, logger, blobs, sign, ttlSeconds: config.BLOB_URL_TTL_SECONDS }),
      WatchRunEvents: watchRunEvents({ db, feed: runEventFeed, logger }),
    },
    runner: runnerHandlers({
      db,
      logger,
      debugWindowMinutes: config.FAILURE_SESSION_RETENTION_MINUTES,
      apiBaseUrl: config.PUBLIC_API_BASE_URL,
      cipher,
      models: runDeps.catalog.models,
      sessions: new HarnessSessions(blobs),
      planFetch: (url) => planGitFetch(url, { policy: new EgressPolicy(config.EGRESS_ALLOWED_ADDRESSES), allowedSchemes: config.GIT_ALLOWED_SCHEMES, allowLocal: config.GIT_ALLOW_LOCAL_URLS }),
      saveTranscript: async (runId, execution, transcript) => {
        await blobs.put(executionTranscriptKey(runId, execution), transcript, TRANSCRIPT_CONTENT_TYPE);
        logger.info({ runId, execution, bytes: transcript.length }, 'transcript stored');
      },
    }),
    blobs: blobHandlers({ blobs, secret: config.BLOB_SIGNING_SECRET, logger }),
    artifacts: artifactHandlers({ db, blobs, sign, ttlSeconds: config.BLOB_URL_TTL_SECONDS, logger }),
    health: {
      Check: unary(logger, 'HealthCheck', async () => {
        const report = await readiness.report();
        const checks = Object.fromEntries(Object.entries(report.checks).map(([k, v]) => [k, v.ok ? 'ok' : (v.error ?? 'failed')]));
        return { ready: report.ready, checks };
      }),
    },
  };
}
