import { z } from 'zod';
import { commonEnv, loadConfig, port, trustProxy, grpcTlsEnv } from '@conveyor/config';
import { DEFAULT_AUTH_EPOCH_PREFIX } from '@conveyor/runtime';

const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback);

const schema = z.object({
  ...commonEnv,
  /** Public REST API listen address. */
  HOST: z.string().default('127.0.0.1'),
  PORT: port(8080),
  /** Orchestrator gRPC address. */
  ORCHESTRATOR_ADDR: z.string().default('127.0.0.1:50051'),
  /** Mutual TLS to the orchestrator: the installation CA and this service's certificate and key. */
  ...grpcTlsEnv,
  /** Deadline for each gRPC call; transparent retries on UNAVAILABLE happen within it. */
  GRPC_DEADLINE_MS: positiveInt(10_000),
  /**
   * Largest JSON body the API accepts (run attachments are base64 and up to 5 per run). Only parsed once the caller
   * is authenticated and within its rate budget; anonymous bodies are never read.
   */
  MAX_BODY_BYTES: positiveInt(10 * 1024 * 1024),
  /** Whose X-Forwarded-For names the client (nobody by default; see @conveyor/config's trustProxy). */
  TRUST_PROXY: trustProxy,
  /** Redis holding the rate-limit counters and console sessions shared by every gateway replica. */
  REDIS_URL: z.string().url().default('redis://127.0.0.1:6379'),
  /** How long a console session lasts after sign-in (docs/console.md). */
  CONSOLE_SESSION_TTL_SECONDS: positiveInt(8 * 60 * 60),
  /** Requests one API key may make per window (RATE_LIMIT_PER_KEY_SECONDS). */
  RATE_LIMIT_PER_KEY_POINTS: positiveInt(1200),
  RATE_LIMIT_PER_KEY_SECONDS: positiveInt(60),
  /** Requests all of a team's keys together may make per window (RATE_LIMIT_PER_TEAM_SECONDS). */
  RATE_LIMIT_PER_TEAM_POINTS: positiveInt(6000),
  RATE_LIMIT_PER_TEAM_SECONDS: positiveInt(60),
  /** Prefix of the counters' Redis keys (installations sharing a Redis, or test platforms, keep theirs apart). */
  RATE_LIMIT_REDIS_PREFIX: z.string().min(1).default('conveyor:rl'),
  /**
   * The cache of authenticated API keys (docs/service-trust.md): how long a cached key is served without asking the
   * orchestrator (0 turns the cache off), how many keys it holds, and how long a request waits for Redis's auth
   * epochs before it asks the orchestrator instead.
   */
  AUTH_CACHE_TTL_SECONDS: z.coerce.number().int().nonnegative().default(60),
  AUTH_CACHE_MAX_KEYS: positiveInt(10_000),
  AUTH_CACHE_REDIS_TIMEOUT_MS: positiveInt(50),
  /** Where the orchestrators keep the auth epochs (their AUTH_EPOCH_REDIS_PREFIX). */
  AUTH_EPOCH_REDIS_PREFIX: z.string().min(1).default(DEFAULT_AUTH_EPOCH_PREFIX),
  /** Base URL users reach this gateway at (links such as `session_link` use it); default: the listen address. */
  PUBLIC_URL: z.string().url().optional(),
  /** Tests: check every JSON response against the OpenAPI document's schema; a mismatch becomes a 500. */
  VALIDATE_RESPONSES: z
    .enum(['true', 'false'])
    .default('false')
    .transform((v) => v === 'true'),
});

export type GatewayConfig = z.infer<typeof schema>;

export const loadGatewayConfig = (env: NodeJS.ProcessEnv = process.env): GatewayConfig =>
  loadConfig(schema, env);

/** Where users reach the gateway: PUBLIC_URL, else the listen address (without a trailing slash). */
export const publicUrl = (config: GatewayConfig, listenPort: number): string =>
  (
    config.PUBLIC_URL ??
    `http://${config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST}:${listenPort}`
  ).replace(/\/+$/, '');
