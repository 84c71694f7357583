import { z } from 'zod';
import { commonEnv, loadConfig, port, trustProxy, grpcTlsEnv } from '@conveyor/config';
import { DEFAULT_AUTH_EPOCH_PREFIX } from '@conveyor/runtime';

const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback);

export const gatewaySettings = z.object({
  ...commonEnv,
  HOST: z.string().default('127.0.0.1').describe('Public REST API listen address.'),
  PORT: port(8080).describe('Port of the public REST API and the console.'),
  ORCHESTRATOR_ADDR: z.string().default('127.0.0.1:50051').describe('Orchestrator gRPC address.'),
  /** Mutual TLS to the orchestrator: the installation CA and this service's certificate and key. */
  ...grpcTlsEnv,
  GRPC_DEADLINE_MS: positiveInt(10_000).describe(
    'Deadline for each gRPC call; transparent retries on UNAVAILABLE happen within it.',
  ),
  MAX_BODY_BYTES: positiveInt(10 * 1024 * 1024).describe(
    'Largest JSON body the API accepts (run attachments are base64 and up to 5 per run). Only parsed once the caller is authenticated and within its rate budget; anonymous bodies are never read.',
  ),
  TRUST_PROXY: trustProxy.describe(
    "Whose X-Forwarded-For names the client: `false` (nobody, the default), `true`, a hop count, or comma-separated addresses, subnets, `loopback`, `linklocal`, `uniquelocal` (express's trust proxy).",
  ),
  REDIS_URL: z
    .string()
    .url()
    .default('redis://127.0.0.1:6379')
    .describe('Redis holding the rate-limit counters and console sessions shared by every gateway replica.'),
  CONSOLE_SESSION_TTL_SECONDS: positiveInt(8 * 60 * 60).describe(
    'How long a console session lasts after sign-in (docs/console.md).',
  ),
  RATE_LIMIT_PER_KEY_POINTS: positiveInt(1200).describe(
    'Requests one API key may make per window (RATE_LIMIT_PER_KEY_SECONDS).',
  ),
  RATE_LIMIT_PER_KEY_SECONDS: positiveInt(60).describe('Window of RATE_LIMIT_PER_KEY_POINTS, in seconds.'),
  RATE_LIMIT_PER_TEAM_POINTS: positiveInt(6000).describe(
    "Requests all of a team's keys together may make per window (RATE_LIMIT_PER_TEAM_SECONDS).",
  ),
  RATE_LIMIT_PER_TEAM_SECONDS: positiveInt(60).describe('Window of RATE_LIMIT_PER_TEAM_POINTS, in seconds.'),
  RATE_LIMIT_REDIS_PREFIX: z
    .string()
    .min(1)
    .default('conveyor:rl')
    .describe(
      "Prefix of the counters' Redis keys (installations sharing a Redis, or test platforms, keep theirs apart).",
    ),
  AUTH_CACHE_TTL_SECONDS: z.coerce
    .number()
    .int()
    .nonnegative()
    .default(60)
    .describe(
      "The cache of authenticated API keys (docs/service-trust.md): how long a cached key is served without asking the orchestrator (0 turns the cache off), how many keys it holds, and how long a request waits for Redis's auth epochs before it asks the orchestrator instead.",
    ),
  AUTH_CACHE_MAX_KEYS: positiveInt(10_000).describe(
    'API keys the cache holds at most (least recently used dropped first).',
  ),
  AUTH_CACHE_REDIS_TIMEOUT_MS: positiveInt(50).describe(
    "How long a request waits for Redis's auth epochs before it asks the orchestrator instead.",
  ),
  AUTH_EPOCH_REDIS_PREFIX: z
    .string()
    .min(1)
    .default(DEFAULT_AUTH_EPOCH_PREFIX)
    .describe('Where the orchestrators keep the auth epochs (their AUTH_EPOCH_REDIS_PREFIX).'),
  GITHUB_WEB_URL: z
    .string()
    .url()
    .default('https://github.com')
    .describe(
      "GitHub's web pages, where the console's browser creates a GitHub App from its manifest (POST /v1/integrations/github-apps/manifest; the console's form-action allows its origin): a GitHub Enterprise Server's is `https://<host>`.",
    ),
  PUBLIC_URL: z
    .string()
    .url()
    .optional()
    .describe(
      'Base URL users reach this gateway at (links such as `session_link` use it); default: the listen address.',
    ),
  VALIDATE_RESPONSES: z
    .enum(['true', 'false'])
    .default('false')
    .transform((v) => v === 'true')
    .describe(
      "Tests: check every JSON response against the OpenAPI document's schema; a mismatch becomes a 500.",
    ),
});

export type GatewayConfig = z.infer<typeof gatewaySettings>;

export const loadGatewayConfig = (env: NodeJS.ProcessEnv = process.env): GatewayConfig =>
  loadConfig(gatewaySettings, env);

/** Where users reach the gateway: PUBLIC_URL, else the listen address (without a trailing slash). */
export const publicUrl = (config: GatewayConfig, listenPort: number): string =>
  (
    config.PUBLIC_URL ??
    `http://${config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST}:${listenPort}`
  ).replace(/\/+$/, '');
