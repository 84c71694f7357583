import type { Server as GrpcServer } from '@grpc/grpc-js';
import type { Server as HttpServer } from 'node:http';
import express from 'express';
import type { Admin } from 'kafkajs';
import { createPrismaClient, type PrismaClient } from '@conveyor/db';
import { createKafka, ensureTopics } from '@conveyor/kafka';
import type { Logger } from '@conveyor/logger';
import { closeAll, closeServer, healthRoutes, listen, Readiness, type Service } from '@conveyor/runtime';
import type { OrchestratorConfig } from './config';
import { DeliveryConsumer, type DeliveryHandler } from './deliveries/delivery-consumer';
import { startGrpcServer, stopGrpcServer } from './grpc/grpc-server';
import { orchestratorHandlers } from './grpc/orchestrator-handlers';

export class Orchestrator implements Service {
  readonly readiness = new Readiness();
  grpcPort = 0;
  httpPort = 0;
  private db: PrismaClient | undefined;
  private kafkaAdmin: Admin | undefined;
  private grpcServer: GrpcServer | undefined;
  private httpServer: HttpServer | undefined;
  private consumer: DeliveryConsumer | undefined;
  private stopped: Promise<void> | undefined;

  constructor(
    private readonly config: OrchestratorConfig,
    private readonly logger: Logger,
    private readonly onDelivery: DeliveryHandler = async (message) => {
      logger.info({ deliveryId: message.deliveryId, webhookUid: message.webhookUid, label: message.label }, 'delivery received');
    },
  ) {}

  async start(): Promise<void> {
    const { config, logger } = this;
    const db = createPrismaClient(config.DATABASE_URL);
    this.db = db;
    this.readiness.add('postgres', async () => {
      await db.$queryRaw`SELECT 1`;
    });

    const http = express();
    http.use(healthRoutes(this.readiness));
    ({ server: this.httpServer, port: this.httpPort } = await listen(http, config.HTTP_PORT, config.HTTP_HOST));

    const handlers = orchestratorHandlers({ db, readiness: this.readiness, logger });
    ({ server: this.grpcServer, port: this.grpcPort } = await startGrpcServer(handlers, config.GRPC_HOST, config.GRPC_PORT));

    if (config.CONSUME_DELIVERIES) await this.startConsumer();
    logger.info({ grpcPort: this.grpcPort, httpPort: this.httpPort }, 'orchestrator started');
  }

  private async startConsumer(): Promise<void> {
    const { config, logger } = this;
    const kafka = createKafka({
      clientId: 'conveyor-orchestrator',
      brokers: config.KAFKA_BROKERS,
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
      handler: this.onDelivery,
      logger: logger.child({ component: 'delivery-consumer' }),
    });
    await this.consumer.start();
  }

  stop(): Promise<void> {
    this.stopped ??= this.shutdown();
    return this.stopped;
  }

  private async shutdown(): Promise<void> {
    this.readiness.markStopping();
    const deadline = this.config.SHUTDOWN_TIMEOUT_MS;
    await closeAll(this.logger, [
      ['grpc server', () => this.grpcServer && stopGrpcServer(this.grpcServer, deadline)],
      ['delivery consumer', () => this.consumer?.stop()],
      ['kafka admin', () => this.kafkaAdmin?.disconnect()],
      ['http server', () => this.httpServer && closeServer(this.httpServer)],
      ['database', () => this.db?.$disconnect()],
    ]);
  }
}
