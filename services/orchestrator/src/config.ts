import { z } from 'zod';
import { commonEnv, csv, loadConfig, port } from '@conveyor/config';
import { DEFAULT_DELIVERIES_TOPIC, DEFAULT_ORCHESTRATOR_CONSUMER_GROUP } from '@conveyor/kafka';

const schema = z.object({
  ...commonEnv,
  /** PostgreSQL, the system of record. */
  DATABASE_URL: z.string().url().default('postgresql://conveyor:conveyor@127.0.0.1:5432/conveyor'),
  /** Redis for BullMQ queues and schedulers. */
  REDIS_URL: z.string().url().default('redis://127.0.0.1:6379'),
  /** Kafka bootstrap brokers, comma-separated. */
  KAFKA_BROKERS: csv('127.0.0.1:9092'),
  /** Topic the ingress publishes deliveries to, and the consumer group reading it. */
  DELIVERIES_TOPIC: z.string().min(1).default(DEFAULT_DELIVERIES_TOPIC),
  DELIVERIES_CONSUMER_GROUP: z.string().min(1).default(DEFAULT_ORCHESTRATOR_CONSUMER_GROUP),
  /** gRPC listen address for the gateway and runners. */
  GRPC_HOST: z.string().default('127.0.0.1'),
  GRPC_PORT: port(50051),
  /** HTTP port for /healthz, /readyz and /metrics. */
  HTTP_HOST: z.string().default('127.0.0.1'),
  HTTP_PORT: port(8081),
  /** Start the Kafka delivery consumer (off only for tools that need the domain without consuming). */
  CONSUME_DELIVERIES: z
    .enum(['true', 'false'])
    .default('true')
    .transform((v) => v === 'true'),
});

export type OrchestratorConfig = z.infer<typeof schema>;

export const loadOrchestratorConfig = (env: NodeJS.ProcessEnv = process.env): OrchestratorConfig => loadConfig(schema, env);
