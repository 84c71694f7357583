import { z } from 'zod';
import { commonEnv, csv, loadConfig, port } from '@conveyor/config';
import { DEFAULT_DELIVERIES_TOPIC } from '@conveyor/kafka';

const schema = z.object({
  ...commonEnv,
  /** Webhook edge listen address. */
  HOST: z.string().default('127.0.0.1'),
  PORT: port(8090),
  /** Redis for dedupe and rate limits. */
  REDIS_URL: z.string().url().default('redis://127.0.0.1:6379'),
  /** Kafka bootstrap brokers, comma-separated. */
  KAFKA_BROKERS: csv('127.0.0.1:9092'),
  /** Topic deliveries are published to. */
  DELIVERIES_TOPIC: z.string().min(1).default(DEFAULT_DELIVERIES_TOPIC),
  /** Orchestrator gRPC address (webhook configuration lookups). */
  ORCHESTRATOR_ADDR: z.string().default('127.0.0.1:50051'),
});

export type IngressConfig = z.infer<typeof schema>;

export const loadIngressConfig = (env: NodeJS.ProcessEnv = process.env): IngressConfig => loadConfig(schema, env);
