import type { Server as HttpServer } from 'node:http';
import { Redis } from 'ioredis';
import type { Admin } from 'kafkajs';
import { ChannelListener, createPrismaClient, type PrismaClient } from '@conveyor/db';
import { createKafka, ensureTopics, kafkaSecurityOptions } from '@conveyor/kafka';
import type { Logger } from '@conveyor/logger';
import {
  createKafkaConsumerLagGauge,
  createMetricsRegistry,
  createRetentionDeletedCounter,
  createEventDeliveryAttemptsCounter,
  createRunnersLostCounter,
  createRunQueueDepthGauge,
  createRunQueueOldestWaitingGauge,
} from '@conveyor/metrics';
import {
  authEpochKeys,
  type BackgroundLoop,
  closeAll,
  closeServer,
  Readiness,
  type Service,
  logConnectionOutages,
  startShellServer,
} from '@conveyor/runtime';
import type * as grpc from '@grpc/grpc-js';
import { authEpochBumper } from './auth/auth-epoch-bumper';
import type { Caller } from './auth/caller';
import { artifactLinkSigner, configuredBlobStore } from './blobs/configured-blob-store';
import { CatalogModule } from './catalog/catalog-module';
import { defaultHarness, type OrchestratorConfig } from './config';
import { ConsumerLagMonitor } from './deliveries/consumer-lag-monitor';
import { DeliveryConsumer, type DeliveryBatchHandler } from './deliveries/delivery-consumer';
import { DeliveryProcessor, type StartRunInput } from './deliveries/delivery-processor';
import { DeliveryRetention } from './deliveries/delivery-retention';
import { PrismaDeliveryStore } from './deliveries/prisma-delivery-store';
import { EgressPolicy } from './egress/egress-policy';
import { planGitFetch } from './egress/git-egress';
import { EventDispatcher } from './events/event-dispatcher';
import { eventRetentionLoop } from './events/event-retention';
import { RunRetention } from './retention/run-retention';
import { AgentIdentities } from './identities/agent-identities';
import { IdentityKeys } from './identities/identity-keys';
import { HarnessSessions } from './runner/harness-sessions';
import { LostRunnerSweeper } from './runner/lost-runner-sweeper';
import { WorkerDispatch } from './workers/worker-dispatch';
import { prepareRun, type CreateRunDeps } from './runs/create-run';
import { OutboxRelay } from './runs/outbox-relay';
import { PrismaRunReferences } from './runs/prisma-run-references';
import { RunEventFeed } from './runs/run-event-feed';
import { RunQueue } from './runs/run-queue';
import { RunQueueReconciler } from './runs/run-queue-reconciler';
import { executionTranscriptKey, TRANSCRIPT_CONTENT_TYPE } from './runs/transcript';
import { ScheduleModule } from './schedules/schedule-module';
import { SecretCipher } from './secrets/secret-cipher';
import { WebhookVersions } from './webhooks/webhook-versions';
import { serverTlsCredentials, startGrpcServer, stopGrpcServer } from './grpc/grpc-server';
import { artifactHandlers } from './grpc/handlers/artifact-handlers';
import { authHandlers } from './grpc/handlers/auth-handlers';
import { blobHandlers } from './grpc/handlers/blob-handlers';
import { catalogHandlers } from './grpc/handlers/catalog-handlers';
import { eventEndpointHandlers } from './grpc/handlers/event-endpoint-handlers';
import { integrationHandlers } from './grpc/handlers/integration-handlers';
import { evaluateGitHubAppDelivery } from './integrations/github-app-runs';
import { GitHubAppReports } from './integrations/github-app-reports';
import { AppRunBudget } from './integrations/app-run-budget';
import { anyIntegration } from './integrations/integration-deliveries';
import { evaluateSlackAppDelivery } from './integrations/slack/slack-app-runs';
import { SlackPoster } from './integrations/slack/slack-poster';
import { evaluateLinearDelivery } from './integrations/linear/linear-runs';
import { LinearReporter } from './integrations/linear/linear-reports';
import { InstallationTokens } from './github/github-app-auth';
import { factoryHandlers } from './grpc/handlers/factory-handlers';
import { healthHandlers } from './grpc/handlers/health-handlers';
import { identityHandlers } from './grpc/handlers/identity-handlers';
import { runHandoffHandlers } from './grpc/handlers/run-handoff-handlers';
import { runInsightsHandler } from './grpc/handlers/run-insights-handler';
import { runLifecycleHandlers } from './grpc/handlers/run-lifecycle-handlers';
import { runQueryHandlers } from './grpc/handlers/run-query-handlers';
import { runnerHandlers } from './grpc/handlers/runner-handlers';
import { scheduleHandlers } from './grpc/handlers/schedule-handlers';
import { watchRunEvents } from './grpc/handlers/watch-run-events';
import { webhookIngressHandlers } from './grpc/handlers/webhook-ingress-handlers';
import { workerEndpointHandlers, workerTokenPeer } from './grpc/handlers/worker-endpoint';
import { WorkerHub } from './grpc/handlers/worker-hub';
import { certificatePeer } from './grpc/rpc-guard';

export class Orchestrator implements Service {
  readonly readiness = new Readiness();
  /** The service's Prometheus registry, served at `/metrics` on the HTTP port (see docs/metrics.md). */
  readonly metrics = createMetricsRegistry('orchestrator');
  grpcPort = 0;
  workerGrpcPort = 0;
  httpPort = 0;
  private db: PrismaClient | undefined;
  private redis: Redis | undefined;
  private runQueue: RunQueue | undefined;
  private outbox: OutboxRelay | undefined;
  private sweeper: LostRunnerSweeper | undefined;
  private queueReconciler: RunQueueReconciler | undefined;
  private kafkaAdmin: Admin | undefined;
  private grpcServer: grpc.Server | undefined;
  private workerGrpcServer: grpc.Server | undefined;
  private httpServer: HttpServer | undefined;
  private consumer: DeliveryConsumer | undefined;
  private lagMonitor: ConsumerLagMonitor | undefined;
  private deliveries: DeliveryProcessor | undefined;
  private deliveryRetention: DeliveryRetention | undefined;
  private schedules: ScheduleModule | undefined;
  private events: EventDispatcher | undefined;
  private linearReports: LinearReporter | undefined;
  private githubAppReports: GitHubAppReports | undefined;
  private integrationReports: ChannelListener | undefined;
  private eventRetention: BackgroundLoop | undefined;
  private runRetention: RunRetention | undefined;
  private outboundEvents: ChannelListener | undefined;
  private slackPoster: SlackPoster | undefined;
  private slackPosts: ChannelListener | undefined;
  private workerDispatch: WorkerDispatch | undefined;
  private runEventFeed: RunEventFeed | undefined;
  private authEpochs: ChannelListener | undefined;
  private stopped: Promise<void> | undefined;

  constructor(
    private readonly config: OrchestratorConfig,
    private readonly logger: Logger,
    /** Replaces the webhook delivery processor (tests of the consumer alone). */
    private readonly onDeliveries?: DeliveryBatchHandler,
  ) {}

  async start(): Promise<void> {
    const { config, logger } = this;
    // Read first: a missing certificate fails the start before anything is connected.
    const coreCredentials = serverTlsCredentials(config, 'mutual-tls');
    const workerEndpointCredentials = serverTlsCredentials(config, 'server-tls-only');
    const db = createPrismaClient(config.DATABASE_URL);
    this.db = db;
    this.readiness.add('postgres', async () => {
      await db.$queryRaw`SELECT 1`;
    });

    ({ server: this.httpServer, port: this.httpPort } = await startShellServer({
      readiness: this.readiness,
      metrics: this.metrics,
      port: config.HTTP_PORT,
      host: config.HTTP_HOST,
    }));

    // BullMQ needs maxRetriesPerRequest: null so blocking commands survive reconnects.
    const redis = new Redis(config.REDIS_URL, { maxRetriesPerRequest: null });
    this.redis = redis;
    logConnectionOutages(redis, logger, 'redis (run queue, schedules, auth epochs)');
    this.readiness.add('redis', async () => {
      await redis.ping();
    });
    const blobs = configuredBlobStore(db, config);
    const runQueue = new RunQueue(redis, config.RUN_QUEUE);
    this.runQueue = runQueue;
    createRunQueueDepthGauge(this.metrics, () => runQueue.queue.getJobCounts('waiting', 'active', 'delayed'));
    createRunQueueOldestWaitingGauge(this.metrics, () => runQueue.oldestWaitingAt());
    const outbox = new OutboxRelay(db, runQueue, logger.child({ component: 'outbox' }));
    this.outbox = outbox;
    const kickOutbox = () => void outbox.kick();
    outbox.start();
    this.sweeper = new LostRunnerSweeper(
      {
        db,
        kickOutbox,
        logger: logger.child({ component: 'lost-runner-sweeper' }),
        lost: createRunnersLostCounter(this.metrics),
      },
      config.RUNNER_LOST_AFTER_MS,
    );
    this.sweeper.start();
    const queueReconciler = new RunQueueReconciler(
      { db, queue: runQueue, logger: logger.child({ component: 'run-queue-reconciler' }) },
      config.RUN_QUEUE_RECONCILE_INTERVAL_MS,
    );
    this.queueReconciler = queueReconciler;
    queueReconciler.start();
    this.readiness
      .observe('outbox relay', outbox.loop)
      .observe('lost-runner sweep', this.sweeper.loop)
      .observe('run queue reconciliation', queueReconciler.loop);
    // A Redis that comes back may have come back empty: look for runs without a job at once.
    redis.on('ready', () => void queueReconciler.loop.trigger());

    // Parses the model catalog: a bad MODELS_CONFIG fails the start, not the first run.
    const catalog = new CatalogModule({ config, db, logger });
    // One way to start runs for every source: API, automations, schedules, judges.
    const runDeps: CreateRunDeps = {
      db,
      kickOutbox,
      defaultHarness: defaultHarness(config),
      references: new PrismaRunReferences(db),
      catalog,
    };
    const identities = new AgentIdentities({ db, models: catalog.models });
    const identityKeys = new IdentityKeys(db);
    const cipher = SecretCipher.fromConfig(config);
    const webhookVersions = new WebhookVersions(redis);
    const egress = {
      policy: new EgressPolicy(config.EGRESS_ALLOWED_ADDRESSES),
      allowedSchemes: config.GIT_ALLOWED_SCHEMES,
      allowLocal: config.GIT_ALLOW_LOCAL_URLS,
    };
    const github = { baseUrl: config.GITHUB_API_URL, policy: egress.policy, timeoutMs: 30_000 };
    // GitHub Apps: installation tokens stay in this process; check runs report the Apps' runs.
    const installationTokens = new InstallationTokens(github);
    const appTokens = { db, cipher, tokens: installationTokens };
    const githubAppReports = new GitHubAppReports({
      db,
      github,
      appTokens,
      publicApiBaseUrl: config.PUBLIC_API_BASE_URL,
      logger: logger.child({ component: 'github-app-reports' }),
      schedule: config.GITHUB_APP_REPORT_RETRY_SCHEDULE_MS,
      intervalMs: config.EVENT_DISPATCH_INTERVAL_MS,
    });
    this.githubAppReports = githubAppReports;
    githubAppReports.queue.start();
    this.readiness.observe('github app reports', githubAppReports.queue.loop);
    const appRunBudget = new AppRunBudget(redis, {
      runsPerHour: config.GITHUB_APP_RUNS_PER_HOUR,
      keyPrefix: config.RATE_LIMIT_REDIS_PREFIX,
      integration: 'github-app',
    });
    // Slack apps: the bot tokens stay in this process; their runs' thread replies are posted from SlackPost rows.
    const slack = { baseUrl: config.SLACK_API_URL, timeoutMs: 10_000 };
    const slackRunBudget = new AppRunBudget(redis, {
      runsPerHour: config.SLACK_APP_RUNS_PER_HOUR,
      keyPrefix: config.RATE_LIMIT_REDIS_PREFIX,
      integration: 'slack-app',
    });
    // Linear integrations: their key stays in this process; reports to their issues are sent with retries.
    const linear = { url: config.LINEAR_API_URL, policy: egress.policy, timeoutMs: 30_000 };
    const linearRunBudget = new AppRunBudget(redis, {
      runsPerHour: config.LINEAR_RUNS_PER_HOUR,
      keyPrefix: config.RATE_LIMIT_REDIS_PREFIX,
      integration: 'linear',
    });
    const linearReports = new LinearReporter({
      db,
      cipher,
      linear,
      logger: logger.child({ component: 'linear-reports' }),
      publicApiBaseUrl: config.PUBLIC_API_BASE_URL,
      schedule: config.LINEAR_REPORT_RETRY_SCHEDULE_MS,
      intervalMs: 5_000,
    });
    this.linearReports = linearReports;
    linearReports.queue.start();
    this.readiness.observe('linear reporter', linearReports.queue.loop);
    const kickReports = async () => {
      await Promise.all([githubAppReports.queue.kick(), linearReports.queue.kick()]);
    };
    // The triggers that write GitHub App and Linear reports notify; a lost notification waits for the next poll.
    const integrationReports = new ChannelListener({
      databaseUrl: config.DATABASE_URL,
      channel: 'integration_reports',
      onNotification: () => void kickReports(),
      onListening: kickReports,
      logger: logger.child({ component: 'integration-reports' }),
    });
    this.integrationReports = integrationReports;
    await integrationReports.start();
    const integrationRunDeps = {
      db,
      kickOutbox,
      prepareRun: (caller: Caller, input: StartRunInput) => prepareRun(runDeps, caller, input),
    };
    // Webhook deliveries prepare runs like the API's createRun, and write a batch's runs in one statement.
    this.deliveries = new DeliveryProcessor({
      store: new PrismaDeliveryStore(db),
      logger: logger.child({ component: 'delivery-processor' }),
      prepareRun: (caller, input) => prepareRun(runDeps, caller, input),
      integrations: anyIntegration(
        (webhook, entry, payload, body, log) =>
          evaluateGitHubAppDelivery(
            {
              db,
              kickOutbox,
              budget: appRunBudget,
              prepareRun: (caller, input) => prepareRun(runDeps, caller, input),
            },
            webhook,
            entry,
            payload,
            body,
            log,
          ),
        (webhook, entry, payload, _body, log) =>
          evaluateSlackAppDelivery(
            {
              db,
              kickOutbox,
              budget: slackRunBudget,
              prepareRun: (caller, input) => prepareRun(runDeps, caller, input),
            },
            webhook,
            entry,
            payload,
            log,
          ),
        (webhook, entry, payload, body, log) =>
          evaluateLinearDelivery(
            { ...integrationRunDeps, budget: linearRunBudget },
            webhook,
            entry,
            payload,
            body,
            log,
          ),
      ),
      runsWritten: kickOutbox,
    });
    this.deliveryRetention = new DeliveryRetention(
      db,
      logger.child({ component: 'delivery-retention' }),
      config.DELIVERY_RETENTION_INTERVAL_MS,
    );
    this.deliveryRetention.start();
    const schedules = new ScheduleModule({ config, db, redis, logger, runDeps });
    this.schedules = schedules;
    await schedules.start();

    const authEpochs = authEpochBumper({
      databaseUrl: config.DATABASE_URL,
      redis,
      keys: authEpochKeys(config.AUTH_EPOCH_REDIS_PREFIX),
      logger: logger.child({ component: 'auth-epochs' }),
    });
    this.authEpochs = authEpochs;
    await authEpochs.start();
    this.readiness.add('auth change feed', async () => {
      if (!authEpochs.connected) throw new Error('not listening for authentication changes');
    });

    const runEventFeed = new RunEventFeed(config.DATABASE_URL, logger.child({ component: 'run-event-feed' }));
    this.runEventFeed = runEventFeed;
    await runEventFeed.start();
    this.readiness.add('run event feed', async () => {
      if (!runEventFeed.connected) throw new Error('not listening for run events');
    });

    const sessions = new HarnessSessions(blobs);
    const eventUrls = { policy: egress.policy, httpHosts: config.EVENT_HTTP_ALLOWED_HOSTS };
    const events = new EventDispatcher({
      db,
      attempts: createEventDeliveryAttemptsCounter(this.metrics),
      cipher,
      urls: eventUrls,
      logger: logger.child({ component: 'event-dispatcher' }),
      publicApiBaseUrl: config.PUBLIC_API_BASE_URL,
      schedule: config.EVENT_RETRY_SCHEDULE_MS,
      timeoutMs: config.EVENT_DELIVERY_TIMEOUT_MS,
      disableAfterMs: config.EVENT_ENDPOINT_DISABLE_AFTER_MS,
      concurrency: config.EVENT_ENDPOINT_CONCURRENCY,
      intervalMs: config.EVENT_DISPATCH_INTERVAL_MS,
    });
    this.events = events;
    events.start();
    this.readiness.observe('event dispatcher', events.loop);
    this.eventRetention = eventRetentionLoop(db, logger.child({ component: 'event-retention' }), {
      retentionMs: config.EVENT_RETENTION_MS,
      intervalMs: config.DELIVERY_RETENTION_INTERVAL_MS,
    });
    this.eventRetention.start();
    this.runRetention = new RunRetention(
      {
        db,
        blobs,
        logger: logger.child({ component: 'run-retention' }),
        deleted: createRetentionDeletedCounter(this.metrics),
      },
      {
        defaultDays: config.RUN_RETENTION_DAYS,
        batchSize: config.RUN_RETENTION_BATCH_SIZE,
        intervalMs: config.RUN_RETENTION_INTERVAL_MS,
      },
    );
    this.runRetention.start();
    // The trigger that records an event notifies; a lost notification waits for the next poll at worst.
    const outboundEvents = new ChannelListener({
      databaseUrl: config.DATABASE_URL,
      channel: 'outbound_events',
      onNotification: () => void events.kick(),
      onListening: () => events.kick(),
      logger: logger.child({ component: 'outbound-events' }),
    });
    this.outboundEvents = outboundEvents;
    await outboundEvents.start();
    const slackPoster = new SlackPoster({
      db,
      cipher,
      slack,
      publicApiBaseUrl: config.PUBLIC_API_BASE_URL,
      logger: logger.child({ component: 'slack-poster' }),
      intervalMs: config.EVENT_DISPATCH_INTERVAL_MS,
    });
    this.slackPoster = slackPoster;
    slackPoster.queue.start();
    this.readiness.observe('slack poster', slackPoster.queue.loop);
    // The trigger that writes a post notifies, as the outbound events' does.
    const slackPosts = new ChannelListener({
      databaseUrl: config.DATABASE_URL,
      channel: 'slack_posts',
      onNotification: () => void slackPoster.queue.kick(),
      onListening: () => slackPoster.queue.kick(),
      logger: logger.child({ component: 'slack-posts' }),
    });
    this.slackPosts = slackPosts;
    await slackPosts.start();
    const links = {
      secret: config.BLOB_SIGNING_SECRET,
      baseUrl: config.PUBLIC_API_BASE_URL,
      ttlSeconds: config.BLOB_URL_TTL_SECONDS,
    };
    const sign = artifactLinkSigner(blobs, config);

    // Transport last: every RPC maps onto the services built above; the domain knows nothing about gRPC.
    const workerDispatch = new WorkerDispatch(db, logger.child({ component: 'worker-dispatch' }), {
      staleAfterMs: config.WORKER_STALE_AFTER_MS,
      dispatchIntervalMs: config.WORKER_DISPATCH_INTERVAL_MS,
      apiBaseUrl: config.PUBLIC_API_BASE_URL,
      sessions,
    });
    this.workerDispatch = workerDispatch;
    workerDispatch.start();
    const workerHub = new WorkerHub(db, workerDispatch, logger.child({ component: 'worker-hub' }), {
      heartbeatIntervalMs: config.WORKER_HEARTBEAT_INTERVAL_MS,
      staleAfterMs: config.WORKER_STALE_AFTER_MS,
    });

    const webhookHandlerDeps = {
      db,
      cipher,
      versions: webhookVersions,
      webhookBaseUrl: config.WEBHOOK_BASE_URL,
      logger,
    };
    const handlers = {
      auth: authHandlers({ db, logger }),
      health: healthHandlers({ readiness: this.readiness, logger }),
      runs: {
        ...runQueryHandlers({ db, logger, blobs, links }),
        ...runLifecycleHandlers({
          ...runDeps,
          logger,
          queue: runQueue,
          workerStaleAfterMs: config.WORKER_STALE_AFTER_MS,
        }),
        ...runHandoffHandlers({ db, logger, blobs, sign, ttlSeconds: config.BLOB_URL_TTL_SECONDS }),
        WatchRunEvents: watchRunEvents({ db, feed: runEventFeed, logger }),
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
        apiBaseUrl: config.PUBLIC_API_BASE_URL,
        cipher,
        models: catalog.models,
        sessions,
        planFetch: (url) => planGitFetch(url, egress),
        github,
        appTokens,
        githubAppReports,
        linearReports,
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
      factories: factoryHandlers(webhookHandlerDeps),
      webhookIngress: webhookIngressHandlers(webhookHandlerDeps),
      schedules: scheduleHandlers({
        db,
        ticks: schedules.ticks,
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
      identities: identityHandlers({ identities, keys: identityKeys, logger }),
      events: eventEndpointHandlers({
        db,
        cipher,
        urls: eventUrls,
        secretGraceMs: config.EVENT_SECRET_GRACE_MS,
        logger,
        eventsChanged: () => void events.kick(),
      }),
      integrations: integrationHandlers({
        ...webhookHandlerDeps,
        github,
        linear,
        forgetTokens: (id) => installationTokens.forget(id),
        slack,
      }),
    };
    const grpcLogger = logger.child({ component: 'grpc' });
    ({ server: this.grpcServer, port: this.grpcPort } = await startGrpcServer(handlers, {
      host: config.GRPC_HOST,
      port: config.GRPC_PORT,
      credentials: coreCredentials,
      authenticate: certificatePeer,
      logger: grpcLogger,
    }));
    // Self-hosted workers never reach the listener above: theirs has server TLS (no client certificate) and tokens.
    ({ server: this.workerGrpcServer, port: this.workerGrpcPort } = await startGrpcServer(
      workerEndpointHandlers(db, handlers.workers, handlers.runner),
      {
        host: config.WORKER_GRPC_HOST,
        port: config.WORKER_GRPC_PORT,
        credentials: workerEndpointCredentials,
        authenticate: workerTokenPeer(db),
        logger: grpcLogger.child({ listener: 'worker-endpoint' }),
      },
    ));

    if (config.CONSUME_DELIVERIES) await this.startConsumer();
    logger.info(
      { grpcPort: this.grpcPort, workerGrpcPort: this.workerGrpcPort, httpPort: this.httpPort },
      'orchestrator started',
    );
  }

  private async startConsumer(): Promise<void> {
    const { config, logger } = this;
    const kafka = createKafka({
      clientId: 'conveyor-orchestrator',
      brokers: config.KAFKA_BROKERS,
      security: kafkaSecurityOptions(config),
      log: (level, msg, fields) => logger[level](fields, msg),
    });
    await ensureTopics(kafka, [{ topic: config.DELIVERIES_TOPIC, numPartitions: 3, replicationFactor: 1 }]);
    const admin = kafka.admin();
    this.kafkaAdmin = admin;
    await admin.connect();
    this.readiness.add('kafka', async () => {
      await admin.describeCluster();
    });
    this.consumer = new DeliveryConsumer(kafka, {
      topic: config.DELIVERIES_TOPIC,
      groupId: config.DELIVERIES_CONSUMER_GROUP,
      handler: this.onDeliveries ?? this.deliveries!.handleBatch,
      logger: logger.child({ component: 'delivery-consumer' }),
    });
    await this.consumer.start();
    this.lagMonitor = new ConsumerLagMonitor(admin, {
      topic: config.DELIVERIES_TOPIC,
      groupId: config.DELIVERIES_CONSUMER_GROUP,
      gauge: createKafkaConsumerLagGauge(this.metrics),
      logger: logger.child({ component: 'consumer-lag' }),
    });
    this.lagMonitor.start();
  }

  stop(): Promise<void> {
    this.stopped ??= this.shutdown();
    return this.stopped;
  }

  private async shutdown(): Promise<void> {
    this.readiness.markStopping();
    const deadline = this.config.SHUTDOWN_TIMEOUT_MS;
    await closeAll(this.logger, [
      // Worker streams are ended first: a graceful gRPC shutdown would otherwise wait for them until its deadline.
      ['self-hosted workers', () => this.workerDispatch?.stop()],
      ['run event watchers', () => this.runEventFeed?.stop()],
      ['auth change feed', () => this.authEpochs?.stop()],
      ['grpc server', () => this.grpcServer && stopGrpcServer(this.grpcServer, deadline)],
      ['worker endpoint', () => this.workerGrpcServer && stopGrpcServer(this.workerGrpcServer, deadline)],
      ['delivery consumer', () => this.consumer?.stop()],
      ['consumer lag monitor', () => this.lagMonitor?.stop()],
      ['webhook delivery retention', () => this.deliveryRetention?.stop()],
      ['schedule ticks', () => this.schedules?.stop()],
      ['kafka admin', () => this.kafkaAdmin?.disconnect()],
      ['http server', () => this.httpServer && closeServer(this.httpServer)],
      ['lost-runner sweeper', () => this.sweeper?.stop()],
      ['run queue reconciler', () => this.queueReconciler?.stop()],
      ['outbox relay', () => this.outbox?.stop()],
      ['outbound events', () => this.outboundEvents?.stop()],
      ['event dispatcher', () => this.events?.stop()],
      ['slack posts', () => this.slackPosts?.stop()],
      ['slack poster', () => this.slackPoster?.queue.stop()],
      ['integration reports', () => this.integrationReports?.stop()],
      ['github app reports', () => this.githubAppReports?.queue.stop()],
      ['linear reporter', () => this.linearReports?.queue.stop()],
      ['event retention', () => this.eventRetention?.stop()],
      ['run retention', () => this.runRetention?.stop()],
      ['run queue', () => this.runQueue?.close()],
      ['redis', () => this.redis?.quit()],
      ['database', () => this.db?.$disconnect()],
    ]);
  }
}
