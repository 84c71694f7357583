import { createEventDeliveryAttemptsCounter, createRetentionDeletedCounter } from '@conveyor/metrics';
import { authEpochKeys, loopPart, partOf } from '@conveyor/runtime';
import { authEpochBumper } from '../auth/auth-epoch-bumper';
import { CatalogModule } from '../catalog/catalog-module';
import { defaultHarness } from '../config';
import { DeliveryProcessor, type PrepareRun } from '../deliveries/delivery-processor';
import { DeliveryRetention } from '../deliveries/delivery-retention';
import { PrismaDeliveryStore } from '../deliveries/prisma-delivery-store';
import { EventDispatcher } from '../events/event-dispatcher';
import { eventRetentionLoop } from '../events/event-retention';
import { AgentIdentities } from '../identities/agent-identities';
import { IdentityKeys } from '../identities/identity-keys';
import { RunRetention } from '../retention/run-retention';
import { HarnessSessions } from '../runner/harness-sessions';
import { prepareRun, type CreateRunDeps } from '../runs/create-run';
import { PrismaRunReferences } from '../runs/prisma-run-references';
import { RunEventFeed } from '../runs/run-event-feed';
import { ScheduleModule } from '../schedules/schedule-module';
import { WebhookVersions } from '../webhooks/webhook-versions';
import { WorkerDispatch } from '../workers/worker-dispatch';
import { kickOnNotification, type OutsideWorld } from './adapters';
import { startIntegrations } from './integrations';
import { startRunPipeline, type WiringDeps } from './run-pipeline';

export interface DomainDeps extends WiringDeps {
  outside: OutsideWorld;
}

/** Everything the RPCs and the delivery consumer map onto, with the background work that keeps it moving. */
export async function startDomain(deps: DomainDeps) {
  const { config, logger, metrics, parts, db, redis, outside } = deps;
  const { blobs, cipher } = outside;
  const { runQueue, kickOutbox } = await startRunPipeline(deps);

  // Parses the model catalog: a bad MODELS_CONFIG fails the start, not the first run.
  const catalog = new CatalogModule({ config, db, logger });
  // One way to start runs for every source: API, automations, schedules, judges, integrations.
  const runDeps: CreateRunDeps = {
    db,
    kickOutbox,
    defaultHarness: defaultHarness(config),
    references: new PrismaRunReferences(db),
    catalog,
  };
  const startRun: PrepareRun = (caller, input) => prepareRun(runDeps, caller, input);
  const integrations = await startIntegrations({ ...deps, kickOutbox, prepareRun: startRun });

  // Webhook deliveries prepare runs like the API's createRun, and write a batch's runs in one statement.
  const deliveries = new DeliveryProcessor({
    store: new PrismaDeliveryStore(db),
    logger: logger.child({ component: 'delivery-processor' }),
    prepareRun: startRun,
    integrations: integrations.evaluateDelivery,
    runsWritten: kickOutbox,
  });
  const deliveryRetention = new DeliveryRetention(
    db,
    logger.child({ component: 'delivery-retention' }),
    config.DELIVERY_RETENTION_INTERVAL_MS,
  );
  await parts.add(partOf('webhook delivery retention', deliveryRetention));
  const schedules = new ScheduleModule({ config, db, redis, logger, runDeps });
  await parts.add(partOf('schedule ticks', schedules));

  const authEpochs = authEpochBumper({
    databaseUrl: config.DATABASE_URL,
    redis,
    keys: authEpochKeys(config.AUTH_EPOCH_REDIS_PREFIX),
    logger: logger.child({ component: 'auth-epochs' }),
  });
  await parts.add(
    partOf('auth change feed', authEpochs, {
      ready: async () => {
        if (!authEpochs.connected) throw new Error('not listening for authentication changes');
      },
    }),
  );

  const runEventFeed = new RunEventFeed(config.DATABASE_URL, logger.child({ component: 'run-event-feed' }));
  await parts.add(
    partOf('run event feed', runEventFeed, {
      // Its watchers' streams end before the gRPC server's graceful shutdown, which would otherwise wait for them.
      intake: true,
      ready: async () => {
        if (!runEventFeed.connected) throw new Error('not listening for run events');
      },
    }),
  );

  const events = new EventDispatcher({
    db,
    attempts: createEventDeliveryAttemptsCounter(metrics),
    cipher,
    urls: outside.eventUrls,
    logger: logger.child({ component: 'event-dispatcher' }),
    publicApiBaseUrl: config.PUBLIC_API_BASE_URL,
    schedule: config.EVENT_RETRY_SCHEDULE_MS,
    timeoutMs: config.EVENT_DELIVERY_TIMEOUT_MS,
    disableAfterMs: config.EVENT_ENDPOINT_DISABLE_AFTER_MS,
    concurrency: config.EVENT_ENDPOINT_CONCURRENCY,
    intervalMs: config.EVENT_DISPATCH_INTERVAL_MS,
  });
  await parts.add(loopPart('event dispatcher', events));
  await kickOnNotification(config, logger, parts, {
    name: 'outbound events',
    channel: 'outbound_events',
    kick: () => events.kick(),
  });
  const eventRetention = eventRetentionLoop(db, logger.child({ component: 'event-retention' }), {
    retentionMs: config.EVENT_RETENTION_MS,
    intervalMs: config.DELIVERY_RETENTION_INTERVAL_MS,
  });
  await parts.add(partOf('event retention', eventRetention));
  const runRetention = new RunRetention(
    {
      db,
      blobs,
      logger: logger.child({ component: 'run-retention' }),
      deleted: createRetentionDeletedCounter(metrics),
    },
    {
      defaultDays: config.RUN_RETENTION_DAYS,
      batchSize: config.RUN_RETENTION_BATCH_SIZE,
      intervalMs: config.RUN_RETENTION_INTERVAL_MS,
    },
  );
  await parts.add(partOf('run retention', runRetention));

  const sessions = new HarnessSessions(blobs);
  const workerDispatch = new WorkerDispatch(db, logger.child({ component: 'worker-dispatch' }), {
    staleAfterMs: config.WORKER_STALE_AFTER_MS,
    dispatchIntervalMs: config.WORKER_DISPATCH_INTERVAL_MS,
    apiBaseUrl: config.PUBLIC_API_BASE_URL,
    sessions,
  });
  // Worker streams end first: a graceful gRPC shutdown would otherwise wait for them until its deadline.
  await parts.add(partOf('self-hosted workers', workerDispatch, { intake: true }));

  return {
    runQueue,
    runDeps,
    catalog,
    identities: new AgentIdentities({ db, models: catalog.models }),
    identityKeys: new IdentityKeys(db),
    webhookVersions: new WebhookVersions(redis),
    deliveries,
    schedules,
    runEventFeed,
    events,
    sessions,
    workerDispatch,
    ...integrations,
  };
}

export type Domain = Awaited<ReturnType<typeof startDomain>>;
