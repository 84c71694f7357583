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

export const orchestratorSettings = z
  .object({
    ...commonEnv,
    DATABASE_URL: z
      .string()
      .url()
      .default('postgresql://conveyor:conveyor@127.0.0.1:5432/conveyor')
      .describe('PostgreSQL, the system of record.'),
    REDIS_URL: z
      .string()
      .url()
      .default('redis://127.0.0.1:6379')
      .describe('Redis for BullMQ queues and schedulers.'),
    AUTH_EPOCH_REDIS_PREFIX: z
      .string()
      .min(1)
      .default(DEFAULT_AUTH_EPOCH_PREFIX)
      .describe(
        "Where the auth epochs the gateways' key caches check live (the gateways' AUTH_EPOCH_REDIS_PREFIX).",
      ),
    KAFKA_BROKERS: csv('127.0.0.1:9092').describe('Kafka bootstrap brokers, comma-separated.'),
    /** TLS and SASL to the brokers (KAFKA_SSL*, KAFKA_SASL_*; deploy/README.md). */
    ...kafkaSecurityEnv,
    DELIVERIES_TOPIC: z
      .string()
      .min(1)
      .default(DEFAULT_DELIVERIES_TOPIC)
      .describe("Topic the ingress publishes webhook deliveries to (the ingress's DELIVERIES_TOPIC)."),
    DELIVERIES_CONSUMER_GROUP: z
      .string()
      .min(1)
      .default(DEFAULT_ORCHESTRATOR_CONSUMER_GROUP)
      .describe(
        'Kafka consumer group of the orchestrators reading DELIVERIES_TOPIC (all replicas share it).',
      ),
    RUN_QUEUE: z
      .string()
      .min(1)
      .default(DEFAULT_RUN_QUEUE)
      .describe('BullMQ queue runs wait in (runners consume the same name).'),
    SCHEDULE_QUEUE: z
      .string()
      .min(1)
      .default('schedule-ticks')
      .describe(
        'BullMQ queue of schedule ticks: one job scheduler per enabled schedule, keyed by the schedule ID.',
      ),
    SCHEDULE_RECONCILE_INTERVAL_MS: z.coerce
      .number()
      .int()
      .positive()
      .default(60_000)
      .describe(
        'How often job schedulers are re-synced with the schedule rows (heals a crash between a commit and Redis).',
      ),
    RUN_QUEUE_RECONCILE_INTERVAL_MS: z.coerce
      .number()
      .int()
      .positive()
      .default(30_000)
      .describe(
        'How often QUEUED runs are checked for a job in the run queue, and put back when Redis lost it (docs/faults.md); also right after the Redis connection comes back.',
      ),
    DEFAULT_HARNESS: z
      .string()
      .regex(
        /^(demo|claude|codex|gemini|command:[A-Za-z0-9_-]+)$/,
        'must be demo, claude, codex, gemini or command:<type>',
      )
      .optional()
      .describe(
        'Harness of runs whose `harness.type` is absent or `oz` (docs/harnesses.md): `claude`, `codex`, `gemini`, `command:<type>`, or `demo` (scripted, no model: tests and a dev installation without model credentials). Required in production, so that no production installation silently runs the demo; elsewhere `demo` when unset (`defaultHarness`).',
      ),
    RUNNER_LOST_AFTER_MS: z.coerce
      .number()
      .int()
      .positive()
      .default(30_000)
      .describe('A runner silent for this long has lost its run (see LostRunnerSweeper).'),
    RUN_LEASE_EXPIRY_MS: z.coerce
      .number()
      .int()
      .positive()
      .optional()
      .describe(
        'A run whose pool runner has not heartbeated for this long may be adopted by another runner replica (docs/sandbox.md "Run leases"). Below RUNNER_LOST_AFTER_MS, so a replica takes the run over before the lost-runner sweep ends it; half of it when unset.',
      ),
    FAILURE_SESSION_RETENTION_MINUTES: z.coerce
      .number()
      .int()
      .min(0)
      .max(60)
      .default(10)
      .describe(
        'Minutes a run that failed during environment setup keeps its session for a debug agent; 0 disables.',
      ),
    GRPC_HOST: z
      .string()
      .default('127.0.0.1')
      .describe('Listen address of the core gRPC (gateway, ingress, runners).'),
    GRPC_PORT: port(50051).describe(
      'Port of the core gRPC listener (gateway, ingress, runners; mutual TLS).',
    ),
    /** The gRPC listener's TLS: the installation CA (client certificates must chain to it), this service's cert and key. */
    ...grpcTlsEnv,
    WORKER_GRPC_HOST: z
      .string()
      .default('127.0.0.1')
      .describe(
        'Listen address of the worker endpoint (docs/workers.md): the only listener self-hosted workers reach; server TLS + worker tokens.',
      ),
    WORKER_GRPC_PORT: port(50052).describe(
      'Port of the worker endpoint (self-hosted workers; server TLS and worker tokens).',
    ),
    HTTP_HOST: z.string().default('127.0.0.1').describe('Listen address of /healthz, /readyz and /metrics.'),
    HTTP_PORT: port(8081).describe('Port of /healthz, /readyz and /metrics.'),
    CONSUME_DELIVERIES: z
      .enum(['true', 'false'])
      .default('true')
      .transform((v) => v === 'true')
      .describe(
        'Start the Kafka delivery consumer (off only for tools that need the domain without consuming).',
      ),
    BLOB_SIGNING_SECRET: z
      .string({ required_error: `required (${KEYS_HINT})` })
      .min(32, 'must be 32+ random characters')
      .describe(
        'HMAC-SHA256 key of signed download links (`GET /v1/blobs/{token}`); required, 32+ random characters.',
      ),
    BLOB_SIGNING_PREVIOUS_SECRETS: csv('')
      .refine((secrets) => secrets.every((s) => s.length >= 32), 'each must be 32+ random characters')
      .describe(
        'Earlier BLOB_SIGNING_SECRETs (comma-separated), still accepted for links they signed: keep them one BLOB_URL_TTL_SECONDS after a rotation, then drop them.',
      ),
    PUBLIC_API_BASE_URL: z
      .string()
      .url()
      .default('http://127.0.0.1:8080/v1')
      .describe("The REST API's public base URL (ending in /v1): the prefix of signed download links."),
    BLOB_STORE: z
      .enum(['postgres', 's3'])
      .default('postgres')
      .describe(
        'Where downloadable bytes live: `postgres` (default, the Blob table) or `s3` (an S3-compatible object store).',
      ),
    S3_BUCKET: z
      .string()
      .min(1)
      .optional()
      .describe(
        'BLOB_STORE=s3: the bucket (required then). Credentials come from the AWS default chain (AWS_ACCESS_KEY_ID, …).',
      ),
    S3_REGION: z.string().min(1).default('us-east-1').describe("BLOB_STORE=s3: the bucket's region."),
    S3_ENDPOINT: z
      .string()
      .url()
      .optional()
      .describe('BLOB_STORE=s3: endpoint of an S3-compatible server (MinIO, Ceph, \u2026); unset = AWS S3.'),
    S3_FORCE_PATH_STYLE: z
      .enum(['true', 'false'])
      .default('false')
      .transform((v) => v === 'true')
      .describe(
        'BLOB_STORE=s3: path-style addressing (`endpoint/bucket/key`), which most S3-compatible servers need.',
      ),
    S3_PREFIX: z
      .string()
      .default('')
      .describe(
        'BLOB_STORE=s3: prefix of every object key (installations sharing a bucket keep theirs apart).',
      ),
    WORKER_HEARTBEAT_INTERVAL_MS: z.coerce
      .number()
      .int()
      .min(200)
      .max(60_000)
      .default(5000)
      .describe(
        'Self-hosted workers (docs/workers.md): heartbeat interval they are told to keep, in milliseconds.',
      ),
    WORKER_STALE_AFTER_MS: z.coerce
      .number()
      .int()
      .min(1000)
      .max(600_000)
      .default(15_000)
      .describe(
        'A worker silent this long disappears from the connected list and gets no runs (3 missed heartbeats by default).',
      ),
    WORKER_DISPATCH_INTERVAL_MS: z.coerce
      .number()
      .int()
      .min(100)
      .max(60_000)
      .default(1000)
      .describe('How often each replica looks for queued runs routed to its connected workers.'),
    BLOB_URL_TTL_SECONDS: z.coerce
      .number()
      .int()
      .min(10)
      .max(MAX_SIGNED_LINK_TTL_SECONDS)
      .default(900)
      .describe(
        'Lifetime of signed download links (transcripts, artifacts), in seconds; at most an hour, as a leaked link is a bearer credential.',
      ),
    WEBHOOK_BASE_URL: z
      .string()
      .url()
      .default('http://127.0.0.1:8090')
      .describe(
        "`{webhook_base_url}`: the ingress's public base URL, the prefix of every webhook URL shown to users.",
      ),
    CONVEYOR_SECRETS_KEY: z
      .string({ required_error: `required (${KEYS_HINT})` })
      .refine((v) => Buffer.from(v.trim(), 'base64').length === 32, 'must be 32 random bytes, base64-encoded')
      .describe(
        'AES-256-GCM key (32 bytes, base64) encrypting team secrets and webhook credentials; required.',
      ),
    CONVEYOR_SECRETS_PREVIOUS_KEYS: csv('').describe(
      'Earlier secrets keys (comma-separated base64), still accepted for decryption during a key rotation.',
    ),
    RUN_RETENTION_DAYS: z.coerce
      .number()
      .int()
      .min(0)
      .max(36_500)
      .default(0)
      .describe(
        'Days a finished run (transcripts, artifacts, blobs) is kept after its last update, unless its team sets its own (`conveyor team set-retention`); 0 = forever (default).',
      ),
    RUN_RETENTION_INTERVAL_MS: z.coerce
      .number()
      .int()
      .min(1000)
      .default(60 * 60 * 1000)
      .describe('How often each replica deletes expired runs.'),
    RUN_RETENTION_BATCH_SIZE: z.coerce
      .number()
      .int()
      .min(1)
      .max(10_000)
      .default(500)
      .describe('Expired runs deleted per statement, so a large backlog never holds long locks.'),
    DELIVERY_RETENTION_INTERVAL_MS: z.coerce
      .number()
      .int()
      .positive()
      .default(60 * 60 * 1000)
      .describe(
        "How often the delivery log (entries older than 7 days beyond each webhook's 50 most recent) and old outbound events are pruned.",
      ),
    MODELS_CONFIG: z
      .string()
      .default('')
      .describe(
        'Model catalog as JSON (`{default_model_id?, models: [...]}`, see docs/catalog.md); empty = the built-in catalog.',
      ),
    MODELS_CONFIG_FILE: z
      .string()
      .default('')
      .describe('Path of a file holding the model catalog JSON; used when MODELS_CONFIG is empty.'),
    GIT_BASE_URL: z
      .string()
      .min(1)
      .default('https://github.com')
      .describe(
        "Where an environment's `github_repos` {owner, repo} are cloned from: `<GIT_BASE_URL>/<owner>/<repo>.git`.",
      ),
    GITHUB_APP_REPORT_RETRY_SCHEDULE_MS: csv('0,1000,5000,30000,120000,600000,1800000')
      .pipe(z.array(z.coerce.number().int().min(0)).min(1))
      .describe(
        "Delay before each attempt of what a GitHub App's run owes GitHub (a check run step, the answer), comma-separated ms; each retry is jittered by up to ±10 %. After the last, the report is dropped (logged).",
      ),
    GITHUB_APP_RUNS_PER_HOUR: z.coerce
      .number()
      .int()
      .min(1)
      .max(100_000)
      .default(60)
      .describe(
        'Runs a team\'s GitHub Apps may start in any hour (docs/integrations.md "Rate limits"); a delivery over it starts nothing and its outcome says so. Follow-ups of existing runs are not counted.',
      ),
    SLACK_APP_RUNS_PER_HOUR: z.coerce
      .number()
      .int()
      .min(1)
      .max(100_000)
      .default(60)
      .describe(
        'Runs a team\'s Slack apps may start in any hour (docs/integrations.md "Slack app"); a request over it starts nothing and its outcome says so. Follow-ups in a thread are not counted.',
      ),
    SLACK_API_URL: z
      .string()
      .url()
      .default('https://slack.com/api/')
      .describe(
        "Slack's Web API, where the Slack apps' bot tokens are checked (auth.test) and thread replies posted (chat.postMessage). An operator setting, not a team's: it is not subject to EGRESS_ALLOWED_ADDRESSES.",
      ),
    LINEAR_RUNS_PER_HOUR: z.coerce
      .number()
      .int()
      .min(1)
      .max(100_000)
      .default(60)
      .describe(
        'Runs a team\'s Linear integrations may start in any hour (docs/integrations.md "Linear"); a delivery over it starts nothing and its outcome says so. Follow-ups of existing runs are not counted.',
      ),
    LINEAR_API_URL: z
      .string()
      .url()
      .default('https://api.linear.app/graphql')
      .describe(
        "Linear's GraphQL API, where Linear integrations check their key and comment on and move issues. Its host obeys the egress rules of git fetches (EGRESS_ALLOWED_ADDRESSES).",
      ),
    LINEAR_REPORT_RETRY_SCHEDULE_MS: csv('0,5000,30000,120000,600000,1800000,3600000,10800000')
      .pipe(z.array(z.coerce.number().int().min(0)).min(1))
      .describe(
        "Delay before each attempt of a Linear integration's report (a comment, a state move), comma-separated ms; each retry is jittered by up to ±10 %. After the last, the report fails (logged).",
      ),
    RATE_LIMIT_REDIS_PREFIX: z
      .string()
      .min(1)
      .default('conveyor:rl')
      .describe(
        "Prefix of the GitHub and Slack app run budgets' Redis keys (the gateway's setting of the same name, for its counters): installations sharing a Redis, or test platforms, keep theirs apart.",
      ),
    GITHUB_API_URL: z
      .string()
      .url()
      .default('https://api.github.com')
      .describe(
        "GitHub's REST API, where pull requests are opened and issues commented on: GitHub Enterprise Server's is `https://<host>/api/v3`. Its host obeys the egress rules of git fetches (EGRESS_ALLOWED_ADDRESSES).",
      ),
    GIT_ALLOW_LOCAL_URLS: z
      .enum(['true', 'false'])
      .default('false')
      .transform((v) => v === 'true')
      .describe(
        'Allow file:// and local-path repository URLs in environments (tests, single-machine installs); off by default.',
      ),
    GIT_ALLOWED_SCHEMES: csv('https')
      .pipe(z.array(z.enum(['https', 'http', 'ssh', 'git'])))
      .describe(
        "Transports skill discovery's git may use: `https` only by default; add `http`, `ssh` or `git` deliberately (`ssh`/`git` cannot be pinned to the checked address; see docs/security.md).",
      ),
    EGRESS_ALLOWED_ADDRESSES: csv('')
      .refine(
        (entries) => entries.every(isAddressPortEntry),
        'must be comma-separated ADDRESS:PORT or CIDR:PORT entries, e.g. 10.20.0.7:443,[fd00::5]:8443',
      )
      .describe(
        "Internal destinations the platform's own outbound fetches (git, GitHub's API, event endpoints) may reach although they are loopback, private or link-local: `ADDRESS:PORT` or `CIDR:PORT`, IPv6 in brackets (e.g. `10.20.0.7:443` for an internal git server, `[fd00::5]:8443`). One port per entry: an allowed address never opens its other ports. Empty: public addresses only.",
      ),
    EVENT_HTTP_ALLOWED_HOSTS: csv('').describe(
      'Hosts an event endpoint may name with http:// (e.g. `127.0.0.1` for tests); every other endpoint is https.',
    ),
    EVENT_RETRY_SCHEDULE_MS: csv('0,5000,300000,1800000,7200000,18000000,36000000,36000000')
      .pipe(z.array(z.coerce.number().int().min(0)).min(1))
      .describe(
        "Delay before each attempt of an event delivery, comma-separated ms: Svix's schedule by default (at once, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h); each retry is jittered by up to ±10 %. After the last, the delivery fails.",
      ),
    EVENT_DELIVERY_TIMEOUT_MS: z.coerce
      .number()
      .int()
      .positive()
      .default(15_000)
      .describe('An attempt without a 2xx answer within this long failed.'),
    EVENT_SECRET_GRACE_MS: z.coerce
      .number()
      .int()
      .min(0)
      .default(24 * 60 * 60 * 1000)
      .describe('How long a rotated-out endpoint secret keeps signing alongside the new one.'),
    EVENT_ENDPOINT_DISABLE_AFTER_MS: z.coerce
      .number()
      .int()
      .positive()
      .default(5 * 24 * 60 * 60 * 1000)
      .describe('An endpoint whose every attempt failed for this long is disabled (and says so).'),
    EVENT_ENDPOINT_CONCURRENCY: z.coerce
      .number()
      .int()
      .positive()
      .default(4)
      .describe(
        'Attempts in flight per endpoint and orchestrator: a slow endpoint holds only its own slots.',
      ),
    EVENT_RETENTION_MS: z.coerce
      .number()
      .int()
      .positive()
      .default(30 * 24 * 60 * 60 * 1000)
      .describe('Delivered (or given-up) events, their deliveries and attempts are deleted after this long.'),
    EVENT_DISPATCH_INTERVAL_MS: z.coerce
      .number()
      .int()
      .positive()
      .default(1000)
      .describe(
        'How often the event dispatcher and the Slack poster look for due deliveries and posts when no notification woke them.',
      ),
    SKILL_CACHE_TTL_MS: z.coerce
      .number()
      .int()
      .min(0)
      .default(5 * 60 * 1000)
      .describe(
        "How long discovered skills are served from the cache before the repository's head commit is checked again.",
      ),
  })
  .superRefine((c, ctx) => {
    if (c.BLOB_STORE === 's3' && !c.S3_BUCKET) {
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        path: ['S3_BUCKET'],
        message: 'required when BLOB_STORE=s3',
      });
    }
    if (c.RUN_LEASE_EXPIRY_MS !== undefined && c.RUN_LEASE_EXPIRY_MS >= c.RUNNER_LOST_AFTER_MS) {
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        path: ['RUN_LEASE_EXPIRY_MS'],
        message: 'must be below RUNNER_LOST_AFTER_MS: a run must be adoptable before the sweep ends it',
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

export type OrchestratorConfig = z.infer<typeof orchestratorSettings>;

export const loadOrchestratorConfig = (env: NodeJS.ProcessEnv = process.env): OrchestratorConfig =>
  loadConfig(orchestratorSettings, env);

/** The catalog's settings (CatalogModule), loadable alone: CLI commands check runs like the orchestrator without its keys. */
const catalogSchema = orchestratorSettings.innerType().pick({
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
export const cliSettings = orchestratorSettings
  .innerType()
  .pick({
    DATABASE_URL: true,
    REDIS_URL: true,
    WEBHOOK_BASE_URL: true,
    CONVEYOR_SECRETS_PREVIOUS_KEYS: true,
    // `apply` checks integrations' credentials with their providers, as registering them does.
    EGRESS_ALLOWED_ADDRESSES: true,
    GITHUB_API_URL: true,
    SLACK_API_URL: true,
    LINEAR_API_URL: true,
  })
  .extend({
    CONVEYOR_SECRETS_KEY: z
      .string()
      .optional()
      .describe(
        "The orchestrator's secrets key, needed only by the commands that store or read a secret (`apply`, `seed-dev` with provider keys); when unset, read from `$CONVEYOR_DATA_DIR/keys.env`.",
      ),
    ANTHROPIC_API_KEY: z
      .string()
      .optional()
      .describe("`seed-dev`: stored as the dev team's secret of the same name (Claude runs)."),
    OPENAI_API_KEY: z
      .string()
      .optional()
      .describe("`seed-dev`: stored as the dev team's secret of the same name (Codex runs)."),
    GEMINI_API_KEY: z
      .string()
      .optional()
      .describe("`seed-dev`: stored as the dev team's secret of the same name (Gemini runs)."),
  });
export type CliConfig = z.infer<typeof cliSettings>;
export const loadCliConfig = (env: NodeJS.ProcessEnv = process.env): CliConfig =>
  loadConfig(cliSettings, env);

/** The harness of runs that name none (`harness.type` absent or `oz`); `demo` only outside production. */
export const defaultHarness = (config: Pick<OrchestratorConfig, 'DEFAULT_HARNESS'>): string =>
  config.DEFAULT_HARNESS ?? 'demo';
