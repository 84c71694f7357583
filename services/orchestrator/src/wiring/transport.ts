import type { PrismaClient } from '@conveyor/db';
import { createKafka, ensureTopics, kafkaSecurityOptions } from '@conveyor/kafka';
import type { Logger } from '@conveyor/logger';
import { createKafkaConsumerLagGauge, type Registry } from '@conveyor/metrics';
import { partOf, type ServiceParts } from '@conveyor/runtime';
import type { OrchestratorConfig } from '../config';
import { ConsumerLagMonitor } from '../deliveries/consumer-lag-monitor';
import { DeliveryConsumer, type DeliveryBatchHandler } from '../deliveries/delivery-consumer';
import {
  serverTlsCredentials,
  startGrpcServer,
  stopGrpcServer,
  type GrpcListener,
} from '../grpc/grpc-server';
import { workerEndpointHandlers, workerTokenPeer } from '../grpc/handlers/worker-endpoint';
import { certificatePeer } from '../grpc/rpc-guard';
import type { grpcHandlers } from './grpc-handlers';

/** Read before anything connects: a missing certificate fails the start at once. */
export function listenerCredentials(config: OrchestratorConfig) {
  return {
    core: serverTlsCredentials(config, 'mutual-tls'),
    workers: serverTlsCredentials(config, 'server-tls-only'),
  };
}

export interface GrpcDeps {
  config: OrchestratorConfig;
  logger: Logger;
  parts: ServiceParts;
  db: PrismaClient;
  credentials: ReturnType<typeof listenerCredentials>;
  handlers: ReturnType<typeof grpcHandlers>;
}

/** The two gRPC listeners; returns their ports. */
export async function serveGrpc({ config, logger, parts, db, credentials, handlers }: GrpcDeps) {
  const grpcLogger = logger.child({ component: 'grpc' });
  const serve = async (
    name: string,
    services: Parameters<typeof startGrpcServer>[0],
    listener: GrpcListener,
  ) => {
    const { server, port } = await startGrpcServer(services, listener);
    await parts.add({ name, intake: true, stop: () => stopGrpcServer(server, config.SHUTDOWN_TIMEOUT_MS) });
    return port;
  };
  const grpcPort = await serve('grpc server', handlers, {
    host: config.GRPC_HOST,
    port: config.GRPC_PORT,
    credentials: credentials.core,
    authenticate: certificatePeer,
    logger: grpcLogger,
  });
  // Self-hosted workers never reach the listener above: theirs has server TLS (no client certificate) and tokens.
  const workerGrpcPort = await serve(
    'worker endpoint',
    workerEndpointHandlers(db, handlers.workers, handlers.runner),
    {
      host: config.WORKER_GRPC_HOST,
      port: config.WORKER_GRPC_PORT,
      credentials: credentials.workers,
      authenticate: workerTokenPeer(db),
      logger: grpcLogger.child({ listener: 'worker-endpoint' }),
    },
  );
  return { grpcPort, workerGrpcPort };
}

/** Webhook deliveries from Kafka, with the consumer group's lag as a gauge. */
export async function consumeDeliveries(deps: {
  config: OrchestratorConfig;
  logger: Logger;
  metrics: Registry;
  parts: ServiceParts;
  handler: DeliveryBatchHandler;
}): Promise<void> {
  const { config, logger, metrics, parts, handler } = deps;
  const kafka = createKafka({
    clientId: 'conveyor-orchestrator',
    brokers: config.KAFKA_BROKERS,
    security: kafkaSecurityOptions(config),
    log: (level, msg, fields) => logger[level](fields, msg),
  });
  await ensureTopics(kafka, [{ topic: config.DELIVERIES_TOPIC, numPartitions: 3, replicationFactor: 1 }]);
  const admin = kafka.admin();
  await parts.add({
    name: 'kafka',
    start: () => admin.connect(),
    stop: () => admin.disconnect(),
    ready: async () => {
      await admin.describeCluster();
    },
  });
  const group = { topic: config.DELIVERIES_TOPIC, groupId: config.DELIVERIES_CONSUMER_GROUP };
  const consumer = new DeliveryConsumer(kafka, {
    ...group,
    handler,
    logger: logger.child({ component: 'delivery-consumer' }),
  });
  await parts.add(partOf('delivery consumer', consumer, { intake: true }));
  const lag = new ConsumerLagMonitor(admin, {
    ...group,
    gauge: createKafkaConsumerLagGauge(metrics),
    logger: logger.child({ component: 'consumer-lag' }),
  });
  await parts.add(partOf('consumer lag monitor', lag));
}
