import { isAddressPortEntry } from '@conveyor/egress-address';
import { z } from 'zod';
import { commonEnv, csv, grpcTlsEnv, loadConfig, port } from '@conveyor/config';
import { DEFAULT_RUN_QUEUE } from '@conveyor/run-events';
import { DEFAULT_AUTH_EPOCH_PREFIX } from '@conveyor/runtime';
import { MAX_SIGNED_LINK_TTL_SECONDS } from '@conveyor/blob-store';
import {
  DEFAULT_DELIVERIES_TOPIC,
  DEFAULT_ORCHESTRATOR_CONSUMER_GROUP,
  kafkaSecurityEnv,
} from '@conveyor/kafka';

// Keys have no default in any mode: `npm start` and the test harness generate them per installation (`conveyor keys init`).
const KEYS_HINT = 'generate per installation with `conveyor keys init --file .conveyor/keys.env`';

const schema = z
  .object({
    ...commonEnv,
    /** PostgreSQL, the system of record. */
    DATABASE_URL: z.string().url().default('postgresql://conveyor:conveyor@127.0.0.1:5432/conveyor'),
    /** Redis for BullMQ queues and schedulers. */
    REDIS_URL: z.string().url().default('redis://127.0.0.1:6379'),
    /** Where the auth epochs the gateways' key caches check live (the gateways' AUTH_EPOCH_REDIS_PREFIX). */
    AUTH_EPOCH_REDIS_PREFIX: z.string().min(1).default(DEFAULT_AUTH_EPOCH_PREFIX),
    /** Kafka bootstrap brokers, comma-separated. */
    KAFKA_BROKERS: csv('127.0.0.1:9092'),
    /** TLS and SASL to the brokers (KAFKA_SSL*, KAFKA_SASL_*; deploy/README.md). */
    ...kafkaSecurityEnv,
    /** Topic the ingress publishes deliveries to, and the consumer group reading it. */
    DELIVERIES_TOPIC: z.string().min(1).default(DEFAULT_DELIVERIES_TOPIC),
    DELIVERIES_CONSUMER_GROUP: z.string().min(1).default(DEFAULT_ORCHESTRATOR_CONSUMER_GROUP),
    /** BullMQ queue runs wait in (runners consume the same name). */
    RUN_QUEUE: z.string().min(1).default(DEFAULT_RUN_QUEUE),
    /** BullMQ queue of schedule ticks: one job scheduler per enabled schedule, keyed by the schedule ID. */
    SCHEDULE_QUEUE: z.string().min(1).default('schedule-ticks'),
    /** How often job schedulers are re-synced with the schedule rows (heals a crash between a commit and Redis). */
    SCHEDULE_RECONCILE_INTERVAL_MS: z.coerce.number().int().positive().default(60_000),
    /**
     * How often QUEUED runs are checked for a job in the run queue, and put back when Redis lost it (docs/faults.md);
     * also right after the Redis connection comes back.
     */
    RUN_QUEUE_RECONCILE_INTERVAL_MS: z.coerce.number().int().positive().default(30_000),
    /**
     * Harness of runs whose `harness.type` is absent or `oz` (docs/harnesses.md): `claude`, `codex`, `gemini`,
     * `command:<type>`, or `demo` (scripted, no model: tests and a dev installation without model credentials).
     * Required in production, so that no production installation silently runs the demo; elsewhere `demo` when unset
     * (`defaultHarness`).
     */
    DEFAULT_HARNESS: z
      .string()
      .regex(
        /^(demo|claude|codex|gemini|command:[A-Za-z0-9_-]+)$/,
        'must be demo, claude, codex, gemini or command:<type>',
      )
      .optional(),
    /** A runner silent for this long has lost its run (see LostRunnerSweeper). */
    RUNNER_LOST_AFTER_MS: z.coerce.number().int().positive().default(30_000),
    /** Minutes a run that failed during environment setup keeps its session for a debug agent; 0 disables. */
    FAILURE_SESSION_RETENTION_MINUTES: z.coerce.number().int().min(0).max(60).default(10),
    /** gRPC listen address for the gateway and runners. */
    GRPC_HOST: z.string().default('127.0.0.1'),
    GRPC_PORT: port(50051),
    /** The gRPC listener's TLS: the installation CA (client certificates must chain to it), this service's cert and key. */
    ...grpcTlsEnv,
    /** Worker endpoint (docs/workers.md): the only listener self-hosted workers reach; server TLS + worker tokens. */
    WORKER_GRPC_HOST: z.string().default('127.0.0.1'),
    WORKER_GRPC_PORT: port(50052),
    /** HTTP port for /healthz, /readyz and /metrics. */
    HTTP_HOST: z.string().default('127.0.0.1'),
    HTTP_PORT: port(8081),
    /** Start the Kafka delivery consumer (off only for tools that need the domain without consuming). */
    CONSUME_DELIVERIES: z
      .enum(['true', 'false'])
      .default('true')
      .transform((v) => v === 'true'),
    /** HMAC-SHA256 key of signed download links (`GET /v1/blobs/{token}`); required, 32+ random characters. */
    BLOB_SIGNING_SECRET: z
      .string({ required_error: `required (${KEYS_HINT})` })
      .min(32, 'must be 32+ random characters'),
    /** The REST API's public base URL (ending in /v1): the prefix of signed download links. */
    PUBLIC_API_BASE_URL: z.string().url().default('http://127.0.0.1:8080/v1'),
    /** Where downloadable bytes live: `postgres` (default, the Blob table) or `s3` (an S3-compatible object store). */
    BLOB_STORE: z.enum(['postgres', 's3']).default('postgres'),
    /** BLOB_STORE=s3: bucket (required), region, endpoint of an S3-compatible server, path-style addressing, key prefix. Credentials come from the AWS default chain (AWS_ACCESS_KEY_ID, ...). */
    S3_BUCKET: z.string().min(1).optional(),
    S3_REGION: z.string().min(1).default('us-east-1'),
    S3_ENDPOINT: z.string().url().optional(),
    S3_FORCE_PATH_STYLE: z
      .enum(['true', 'false'])
      .default('false')
      .transform((v) => v === 'true'),
    S3_PREFIX: z.string().default(''),
    /** Self-hosted workers (docs/workers.md): heartbeat interval they are told to keep, in milliseconds. */
    WORKER_HEARTBEAT_INTERVAL_MS: z.coerce.number().int().min(200).max(60_000).default(5000),
    /** A worker silent this long disappears from the connected list and gets no runs (3 missed heartbeats by default). */
    WORKER_STALE_AFTER_MS: z.coerce.number().int().min(1000).max(600_000).default(15_000),
    /** How often each replica looks for queued runs routed to its connected workers. */
    WORKER_DISPATCH_INTERVAL_MS: z.coerce.number().int().min(100).max(60_000).default(1000),
    /** Lifetime of signed download links (transcripts, artifacts), in seconds; at most an hour, as a leaked link is a bearer credential. */
    BLOB_URL_TTL_SECONDS: z.coerce.number().int().min(10).max(MAX_SIGNED_LINK_TTL_SECONDS).default(900),
    /** `{webhook_base_url}`: the ingress's public base URL, the prefix of every webhook URL shown to users. */
    WEBHOOK_BASE_URL: z.string().url().default('http://127.0.0.1:8090'),
    /** AES-256-GCM key (32 bytes, base64) encrypting team secrets and webhook credentials; required. */
    CONVEYOR_SECRETS_KEY: z
      .string({ required_error: `required (${KEYS_HINT})` })
      .refine(
        (v) => Buffer.from(v.trim(), 'base64').length === 32,
        'must be 32 random bytes, base64-encoded',
      ),
    /** Earlier secrets keys (comma-separated base64), still accepted for decryption during a key rotation. */
    CONVEYOR_SECRETS_PREVIOUS_KEYS: csv(''),
    /** How often the delivery log (entries older than 7 days beyond each webhook's 50 most recent) and old outbound events are pruned. */
    DELIVERY_RETENTION_INTERVAL_MS: z.coerce
      .number()
      .int()
      .positive()
      .default(60 * 60 * 1000),
    /** Model catalog as JSON (`{default_model_id?, models: [...]}`, see docs/catalog.md); empty = the built-in catalog. */
    MODELS_CONFIG: z.string().default(''),
    /** Path of a file holding the model catalog JSON; used when MODELS_CONFIG is empty. */
    MODELS_CONFIG_FILE: z.string().default(''),
    /** Where an environment's `github_repos` {owner, repo} are cloned from: `<GIT_BASE_URL>/<owner>/<repo>.git`. */
    GIT_BASE_URL: z.string().min(1).default('https://github.com'),
    /**
     * GitHub's REST API, where pull requests are opened and issues commented on: GitHub Enterprise Server's is
     * `https://<host>/api/v3`. Its host obeys the egress rules of git fetches (EGRESS_ALLOWED_ADDRESSES).
     */
    GITHUB_API_URL: z.string().url().default('https://api.github.com'),
    /** Allow file:// and local-path repository URLs in environments (tests, single-machine installs); off by default. */
    GIT_ALLOW_LOCAL_URLS: z
      .enum(['true', 'false'])
      .default('false')
      .transform((v) => v === 'true'),
    /**
     * Transports skill discovery's git may use: `https` only by default; add `http`, `ssh` or `git` deliberately
     * (`ssh`/`git` cannot be pinned to the checked address; see docs/security.md).
     */
    GIT_ALLOWED_SCHEMES: csv('https').pipe(z.array(z.enum(['https', 'http', 'ssh', 'git']))),
    /**
     * Internal destinations the platform's own outbound fetches (git, GitHub's API, event endpoints) may reach although
     * they are loopback, private or link-local: `ADDRESS:PORT` or `CIDR:PORT`, IPv6 in brackets (e.g.
     * `10.20.0.7:443` for an internal git server, `[fd00::5]:8443`). One port per entry: an allowed address never
     * opens its other ports. Empty: public addresses only.
     */
    EGRESS_ALLOWED_ADDRESSES: csv('').refine(
      (entries) => entries.every(isAddressPortEntry),
      'must be comma-separated ADDRESS:PORT or CIDR:PORT entries, e.g. 10.20.0.7:443,[fd00::5]:8443',
    ),
    /** Hosts an event endpoint may name with http:// (e.g. `127.0.0.1` for tests); every other endpoint is https. */
    EVENT_HTTP_ALLOWED_HOSTS: csv(''),
    /**
     * Delay before each attempt of an event delivery, comma-separated ms: Svix's schedule by default (at once, 5 s,
     * 5 min, 30 min, 2 h, 5 h, 10 h, 10 h); each retry is jittered by up to ±10 %. After the last, the delivery fails.
     */
    EVENT_RETRY_SCHEDULE_MS: csv('0,5000,300000,1800000,7200000,18000000,36000000,36000000').pipe(
      z.array(z.coerce.number().int().min(0)).min(1),
    ),
    /** An attempt without a 2xx answer within this long failed. */
    EVENT_DELIVERY_TIMEOUT_MS: z.coerce.number().int().positive().default(15_000),
    /** How long a rotated-out endpoint secret keeps signing alongside the new one. */
    EVENT_SECRET_GRACE_MS: z.coerce
      .number()
      .int()
      .min(0)
      .default(24 * 60 * 60 * 1000),
    /** An endpoint whose every attempt failed for this long is disabled (and says so). */
    EVENT_ENDPOINT_DISABLE_AFTER_MS: z.coerce
      .number()
      .int()
      .positive()
      .default(5 * 24 * 60 * 60 * 1000),
    /** Attempts in flight per endpoint and orchestrator: a slow endpoint holds only its own slots. */
    EVENT_ENDPOINT_CONCURRENCY: z.coerce.number().int().positive().default(4),
    /** Delivered (or given-up) events, their deliveries and attempts are deleted after this long. */
    EVENT_RETENTION_MS: z.coerce
      .number()
      .int()
      .positive()
      .default(30 * 24 * 60 * 60 * 1000),
    /** How often the dispatcher looks for due deliveries when no notification woke it. */
    EVENT_DISPATCH_INTERVAL_MS: z.coerce.number().int().positive().default(1000),
    /** How long discovered skills are served from the cache before the repository's head commit is checked again. */
    SKILL_CACHE_TTL_MS: z.coerce
      .number()
      .int()
      .min(0)
      .default(5 * 60 * 1000),
  })
  .superRefine((c, ctx) => {
    if (c.BLOB_STORE === 's3' && !c.S3_BUCKET) {
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        path: ['S3_BUCKET'],
        message: 'required when BLOB_STORE=s3',
      });
    }
    if (c.NODE_ENV === 'production' && !c.DEFAULT_HARNESS) {
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        path: ['DEFAULT_HARNESS'],
        message: 'required in production: claude, codex, gemini or command:<type> (demo runs no agent)',
      });
    }
  });

export type OrchestratorConfig = z.infer<typeof schema>;

export const loadOrchestratorConfig = (env: NodeJS.ProcessEnv = process.env): OrchestratorConfig =>
  loadConfig(schema, env);

/** The catalog's settings (CatalogModule), loadable alone: CLI commands check runs like the orchestrator without its keys. */
const catalogSchema = schema.innerType().pick({
  MODELS_CONFIG: true,
  MODELS_CONFIG_FILE: true,
  GIT_BASE_URL: true,
  GIT_ALLOW_LOCAL_URLS: true,
  GIT_ALLOWED_SCHEMES: true,
  EGRESS_ALLOWED_ADDRESSES: true,
  SKILL_CACHE_TTL_MS: true,
});
export type CatalogConfig = z.infer<typeof catalogSchema>;
export const loadCatalogConfig = (env: NodeJS.ProcessEnv = process.env): CatalogConfig =>
  loadConfig(catalogSchema, env);

/**
 * The CLI's settings (cli/main.ts): the orchestrator's own variables, the secrets key only needed by the commands that
 * store or read a secret, and the provider keys `seed-dev` turns into the dev team's secrets.
 */
const cliSchema = schema
  .innerType()
  .pick({ DATABASE_URL: true, REDIS_URL: true, WEBHOOK_BASE_URL: true, CONVEYOR_SECRETS_PREVIOUS_KEYS: true })
  .extend({
    CONVEYOR_SECRETS_KEY: z.string().optional(),
    ANTHROPIC_API_KEY: z.string().optional(),
    OPENAI_API_KEY: z.string().optional(),
    GEMINI_API_KEY: z.string().optional(),
  });
export type CliConfig = z.infer<typeof cliSchema>;
export const loadCliConfig = (env: NodeJS.ProcessEnv = process.env): CliConfig => loadConfig(cliSchema, env);

/** The harness of runs that name none (`harness.type` absent or `oz`); `demo` only outside production. */
export const defaultHarness = (config: Pick<OrchestratorConfig, 'DEFAULT_HARNESS'>): string =>
  config.DEFAULT_HARNESS ?? 'demo';
