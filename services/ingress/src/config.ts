import { z } from 'zod';
import { commonEnv, csv, loadConfig, port, trustProxy, grpcTlsEnv } from '@conveyor/config';
import { DEFAULT_DELIVERIES_TOPIC, kafkaSecurityEnv } from '@conveyor/kafka';

const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback);

export const ingressSettings = z.object({
  ...commonEnv,
  HOST: z.string().default('127.0.0.1').describe('Webhook edge listen address.'),
  PORT: port(8090).describe('Port of the webhook edge (`POST /webhooks/w/{uid}`).'),
  REDIS_URL: z
    .string()
    .url()
    .default('redis://127.0.0.1:6379')
    .describe('Redis for dedupe, rate limits and the webhook-configuration version keys.'),
  KAFKA_BROKERS: csv('127.0.0.1:9092').describe('Kafka bootstrap brokers, comma-separated.'),
  /** TLS and SASL to the brokers (KAFKA_SSL*, KAFKA_SASL_*; deploy/README.md). */
  ...kafkaSecurityEnv,
  DELIVERIES_TOPIC: z
    .string()
    .min(1)
    .default(DEFAULT_DELIVERIES_TOPIC)
    .describe('Topic deliveries are published to.'),
  ORCHESTRATOR_ADDR: z
    .string()
    .default('127.0.0.1:50051')
    .describe('Orchestrator gRPC address (webhook configuration lookups).'),
  /** Mutual TLS to the orchestrator: the installation CA and this service's certificate and key. */
  ...grpcTlsEnv,
  ORCHESTRATOR_DEADLINE_MS: positiveInt(3000).describe(
    'Deadline of a configuration lookup; a lookup that fails answers 503.',
  ),
  TRUST_PROXY: trustProxy.describe(
    "Whose X-Forwarded-For names the sender: `false` (nobody, the default), `true`, a hop count, or comma-separated addresses, subnets, `loopback`, `linklocal`, `uniquelocal` (express's trust proxy).",
  ),
  MAX_BODY_BYTES: positiveInt(256 * 1024).describe(
    'Largest body accepted (the contract says 256 KB); larger ones get 413 while streaming.',
  ),
  DELIVERY_RATE_PER_MINUTE: positiveInt(60).describe(
    'Deliveries per minute per sender per webhook (authenticated, valid JSON, duplicates included).',
  ),
  FAILED_AUTH_PER_MINUTE: positiveInt(20).describe(
    'Failed authentications per minute per sender per webhook before the sender gets 429.',
  ),
  DEDUPE_TTL_SECONDS: positiveInt(8 * 24 * 60 * 60).describe(
    "How long an accepted delivery ID is remembered for dedupe (at least the delivery log's 7 days).",
  ),
  PUBLISH_TIMEOUT_MS: positiveInt(10_000).describe(
    "Upper bound on waiting for Kafka's acknowledgement before answering 503 (Kafka's own retries end sooner).",
  ),
  PUBLISH_LINGER_MS: z.coerce
    .number()
    .int()
    .min(0)
    .max(100)
    .default(2)
    .describe(
      'How long a delivery that finds the Kafka producer idle waits for others to share its produce request.',
    ),
  UNAVAILABLE_RETRY_AFTER_SECONDS: positiveInt(5).describe(
    'Retry-After (seconds) sent with a 503 when Kafka or Redis is unavailable.',
  ),
});

export type IngressConfig = z.infer<typeof ingressSettings>;

export const loadIngressConfig = (env: NodeJS.ProcessEnv = process.env): IngressConfig =>
  loadConfig(ingressSettings, env);
