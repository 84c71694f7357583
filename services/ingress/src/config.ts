import { z } from 'zod';
import { commonEnv, csv, loadConfig, port, trustProxy, grpcTlsEnv } from '@conveyor/config';
import { DEFAULT_DELIVERIES_TOPIC, kafkaSecurityEnv } from '@conveyor/kafka';

const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback);

const schema = z.object({
  ...commonEnv,
  /** Webhook edge listen address. */
  HOST: z.string().default('127.0.0.1'),
  PORT: port(8090),
  /** Redis for dedupe, rate limits and the webhook-configuration version keys. */
  REDIS_URL: z.string().url().default('redis://127.0.0.1:6379'),
  /** Kafka bootstrap brokers, comma-separated. */
  KAFKA_BROKERS: csv('127.0.0.1:9092'),
  /** TLS and SASL to the brokers (KAFKA_SSL*, KAFKA_SASL_*; deploy/README.md). */
  ...kafkaSecurityEnv,
  /** Topic deliveries are published to. */
  DELIVERIES_TOPIC: z.string().min(1).default(DEFAULT_DELIVERIES_TOPIC),
  /** Orchestrator gRPC address (webhook configuration lookups). */
  ORCHESTRATOR_ADDR: z.string().default('127.0.0.1:50051'),
  /** Mutual TLS to the orchestrator: the installation CA and this service's certificate and key. */
  ...grpcTlsEnv,
  /** Deadline of a configuration lookup; a lookup that fails answers 503. */
  ORCHESTRATOR_DEADLINE_MS: positiveInt(3000),
  /** Whose X-Forwarded-For names the sender (nobody by default; see @conveyor/config's trustProxy). */
  TRUST_PROXY: trustProxy,
  /** Largest body accepted (the contract says 256 KB); larger ones get 413 while streaming. */
  MAX_BODY_BYTES: positiveInt(256 * 1024),
  /** Deliveries per minute per sender per webhook (authenticated, valid JSON, duplicates included). */
  DELIVERY_RATE_PER_MINUTE: positiveInt(60),
  /** Failed authentications per minute per sender per webhook before the sender gets 429. */
  FAILED_AUTH_PER_MINUTE: positiveInt(20),
  /** How long an accepted delivery ID is remembered for dedupe (at least the delivery log's 7 days). */
  DEDUPE_TTL_SECONDS: positiveInt(8 * 24 * 60 * 60),
  /** Upper bound on waiting for Kafka's acknowledgement before answering 503 (Kafka's own retries end sooner). */
  PUBLISH_TIMEOUT_MS: positiveInt(10_000),
  /** How long a delivery that finds the Kafka producer idle waits for others to share its produce request. */
  PUBLISH_LINGER_MS: z.coerce.number().int().min(0).max(100).default(2),
  /** Retry-After (seconds) sent with a 503 when Kafka or Redis is unavailable. */
  UNAVAILABLE_RETRY_AFTER_SECONDS: positiveInt(5),
});

export type IngressConfig = z.infer<typeof schema>;

export const loadIngressConfig = (env: NodeJS.ProcessEnv = process.env): IngressConfig =>
  loadConfig(schema, env);
