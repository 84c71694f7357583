import type { Server } from 'node:http';
import express from 'express';
import { trustProxySetting } from '@conveyor/config';
import { Redis } from 'ioredis';
import type { Admin, ISocketFactory, Kafka } from 'kafkajs';
import { createKafka, DELIVERY_LABELS, ensureTopics, kafkaSecurityOptions } from '@conveyor/kafka';
import type { Logger } from '@conveyor/logger';
import {
  createMetricsRegistry,
  createWebhookDeliveriesCounter,
  httpMetrics,
  metricsRouter,
  createDependencyUpGauge,
} from '@conveyor/metrics';
import { createOrchestratorClients, mutualTlsCredentials, type OrchestratorClients } from '@conveyor/proto';
import {
  closeAll,
  closeServer,
  errorHandler,
  healthRoutes,
  listen,
  notFoundHandler,
  Readiness,
  requestContext,
  type Service,
  logConnectionOutages,
  BackgroundLoop,
} from '@conveyor/runtime';
import type { IngressConfig } from './config';
import { DedupeStore } from './dedupe-store';
import { DeliveryPublisher } from './delivery-publisher';
import { orchestratorWebhookLookup } from './orchestrator-lookup';
import { RateLimits } from './rate-limits';
import { webhookEndpoint } from './webhook-endpoint';
import { WebhookResolver } from './webhook-resolver';

export interface IngressDeps {
  /** Replaces kafkajs's sockets (tests cut the connection to the broker with it). */
  kafkaSocketFactory?: ISocketFactory;
}

/** How often the ingress checks it is set up with Kafka (a no-op once it is); backoff while Kafka is down. */
const KAFKA_SETUP_INTERVAL_MS = 2000;

export class Ingress implements Service {
  readonly readiness = new Readiness();
  readonly metrics = createMetricsRegistry('ingress');
  /** `conveyor_webhook_deliveries_total{label}`: count every delivery outcome here (see docs/metrics.md). */
  readonly webhookDeliveries = createWebhookDeliveriesCounter(this.metrics, DELIVERY_LABELS);
  port = 0;
  private server: Server | undefined;
  private redis: Redis | undefined;
  private publisher: DeliveryPublisher | undefined;
  private admin: Admin | undefined;
  private adminConnected = false;
  private orchestrator: OrchestratorClients | undefined;
  private kafkaSetup: BackgroundLoop | undefined;
  private stopped: Promise<void> | undefined;

  constructor(
    private readonly config: IngressConfig,
    private readonly logger: Logger,
    private readonly deps: IngressDeps = {},
  ) {}

  async start(): Promise<void> {
    const { config, logger } = this;
    // Read first: a missing certificate fails the start before anything is connected.
    const orchestratorCredentials = mutualTlsCredentials(config);
    // Auto-pipelining sends the commands one request issues together (version, budgets) in one write.
    const redis = new Redis(config.REDIS_URL, {
      maxRetriesPerRequest: 1,
      enableOfflineQueue: false,
      lazyConnect: true,
      enableAutoPipelining: true,
    });
    this.redis = redis;
    logConnectionOutages(redis, logger, 'redis (dedupe, rate limits, webhook versions)');
    await redis.connect();
    this.readiness.add('redis', async () => {
      await redis.ping();
    });

    // Short timeouts and few retries: a delivery must learn within PUBLISH_TIMEOUT_MS that Kafka is unavailable.
    const kafka = createKafka({
      clientId: 'conveyor-ingress',
      brokers: config.KAFKA_BROKERS,
      security: kafkaSecurityOptions(config),
      log: (level, msg, fields) => logger[level](fields, msg),
      connectionTimeoutMs: 1000,
      requestTimeoutMs: 3000,
      retry: { retries: 2, initialRetryTime: 100, maxRetryTime: 1000 },
      ...(this.deps.kafkaSocketFactory && { socketFactory: this.deps.kafkaSocketFactory }),
    });
    this.publisher = new DeliveryPublisher(
      kafka,
      config.DELIVERIES_TOPIC,
      logger.child({ component: 'delivery-publisher' }),
      2000,
      config.PUBLISH_LINGER_MS,
    );
    this.admin = kafka.admin();
    this.readiness.add('kafka', async () => {
      if (!this.adminConnected) throw new Error('not connected to Kafka');
      await this.admin!.describeCluster();
    });
    // When Kafka is down at start the ingress still starts (deliveries get 503 with Retry-After, readiness reports
    // Kafka) and keeps trying in the background.
    this.kafkaSetup = new BackgroundLoop({
      name: 'kafka setup',
      dependency: 'kafka',
      intervalMs: KAFKA_SETUP_INTERVAL_MS,
      run: () => this.setUpKafka(kafka),
      logger,
      backoff: { maxMs: 5000 },
    });
    this.kafkaSetup.start();
    await this.kafkaSetup.settled();

    this.orchestrator = createOrchestratorClients(config.ORCHESTRATOR_ADDR, orchestratorCredentials);
    const resolver = new WebhookResolver(
      redis,
      orchestratorWebhookLookup(this.orchestrator, config.ORCHESTRATOR_DEADLINE_MS),
    );

    const app = express();
    app.disable('x-powered-by');
    app.set('trust proxy', trustProxySetting(config.TRUST_PROXY));
    app.use(httpMetrics(this.metrics));
    app.use(requestContext(logger));
    app.use(healthRoutes(this.readiness));
    createDependencyUpGauge(this.metrics, () => this.readiness.report());
    app.use(metricsRouter(this.metrics));
    app.use(
      webhookEndpoint({
        resolver,
        limits: new RateLimits(redis, {
          deliveriesPerMinute: config.DELIVERY_RATE_PER_MINUTE,
          failedAuthPerMinute: config.FAILED_AUTH_PER_MINUTE,
        }),
        dedupe: new DedupeStore(redis, config.DEDUPE_TTL_SECONDS),
        publisher: this.publisher,
        logger: logger.child({ component: 'webhook-endpoint' }),
        maxBodyBytes: config.MAX_BODY_BYTES,
        publishTimeoutMs: config.PUBLISH_TIMEOUT_MS,
        unavailableRetryAfterSeconds: config.UNAVAILABLE_RETRY_AFTER_SECONDS,
        onOutcome: (label) => this.webhookDeliveries.inc({ label }),
      }),
    );
    app.use(notFoundHandler);
    app.use(errorHandler());
    ({ server: this.server, port: this.port } = await listen(app, config.PORT, config.HOST));
    logger.info({ port: this.port }, 'ingress started');
  }

  /** Creates the topic and connects, once; a failure is the loop's to retry. */
  private async setUpKafka(kafka: Kafka): Promise<void> {
    if (this.adminConnected && this.publisher!.isConnected) return;
    await ensureTopics(kafka, [
      { topic: this.config.DELIVERIES_TOPIC, numPartitions: 3, replicationFactor: 1 },
    ]);
    await this.admin!.connect();
    this.adminConnected = true;
    await this.publisher!.connect();
  }

  stop(): Promise<void> {
    this.stopped ??= (async () => {
      this.readiness.markStopping();
      await closeAll(this.logger, [
        ['kafka setup', () => this.kafkaSetup?.stop()],
        ['http server', () => this.server && closeServer(this.server)],
        ['kafka producer', () => this.publisher?.disconnect()],
        ['kafka admin', () => this.admin?.disconnect()],
        ['orchestrator client', () => this.orchestrator?.close()],
        ['redis', () => this.redis?.quit()],
      ]);
    })();
    return this.stopped;
  }
}
