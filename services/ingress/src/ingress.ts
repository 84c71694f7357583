import type { Server } from 'node:http';
import express from 'express';
import { Redis } from 'ioredis';
import type { Admin } from 'kafkajs';
import { createKafka, ensureTopics } from '@conveyor/kafka';
import type { Logger } from '@conveyor/logger';
import { createMetricsRegistry, createWebhookDeliveriesCounter, httpMetrics, metricsRouter } from '@conveyor/metrics';
import { closeAll, closeServer, errorHandler, healthRoutes, listen, notFoundHandler, Readiness, requestContext, type Service } from '@conveyor/runtime';
import type { IngressConfig } from './config';
import { DeliveryPublisher } from './delivery-publisher';

export class Ingress implements Service {
  readonly readiness = new Readiness();
  readonly metrics = createMetricsRegistry('ingress');
  /** `conveyor_webhook_deliveries_total{label}`: count every delivery outcome here (see docs/metrics.md). */
  readonly webhookDeliveries = createWebhookDeliveriesCounter(this.metrics);
  port = 0;
  private server: Server | undefined;
  private redis: Redis | undefined;
  private publisher: DeliveryPublisher | undefined;
  private admin: Admin | undefined;
  private stopped: Promise<void> | undefined;

  constructor(
    private readonly config: IngressConfig,
    private readonly logger: Logger,
  ) {}

  async start(): Promise<void> {
    const { config, logger } = this;
    const redis = new Redis(config.REDIS_URL, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: true });
    this.redis = redis;
    redis.on('error', (err) => logger.warn({ err: err.message }, 'redis error'));
    await redis.connect();
    this.readiness.add('redis', async () => {
      await redis.ping();
    });

    const kafka = createKafka({ clientId: 'conveyor-ingress', brokers: config.KAFKA_BROKERS, log: (level, msg, fields) => logger[level](fields, msg) });
    await ensureTopics(kafka, [{ topic: config.DELIVERIES_TOPIC, numPartitions: 3, replicationFactor: 1 }]);
    this.publisher = new DeliveryPublisher(kafka, config.DELIVERIES_TOPIC);
    await this.publisher.connect();
    const admin = kafka.admin();
    this.admin = admin;
    await admin.connect();
    this.readiness.add('kafka', async () => {
      await admin.describeCluster();
    });

    const app = express();
    app.disable('x-powered-by');
    app.use(httpMetrics(this.metrics));
    app.use(requestContext(logger));
    app.use(healthRoutes(this.readiness));
    app.use(metricsRouter(this.metrics));
    app.use(notFoundHandler);
    app.use(errorHandler());
    ({ server: this.server, port: this.port } = await listen(app, config.PORT, config.HOST));
    logger.info({ port: this.port }, 'ingress started');
  }

  stop(): Promise<void> {
    this.stopped ??= (async () => {
      this.readiness.markStopping();
      await closeAll(this.logger, [
        ['http server', () => this.server && closeServer(this.server)],
        ['kafka producer', () => this.publisher?.disconnect()],
        ['kafka admin', () => this.admin?.disconnect()],
        ['redis', () => this.redis?.quit()],
      ]);
    })();
    return this.stopped;
  }
}
