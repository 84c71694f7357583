import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { commonEnv, loadConfig } from '@conveyor/config';
import { harnessCommands } from './harness/harness-config';
import { modelProxyEnv } from './model-proxy/model-proxy-config';
import { sandboxEnv } from './sandbox/sandbox-config';

/** The self-hosted worker program's environment (docs/workers.md); the runner's own settings where they overlap. */
export const workerSettings = z.object({
  ...commonEnv,
  WORKER_ENDPOINT: z
    .string()
    .default('127.0.0.1:50052')
    .describe("The platform's worker endpoint (host:port; the worker's one outbound connection, TLS)."),
  WORKER_ENDPOINT_CA_FILE: z
    .string()
    .min(1)
    .optional()
    .describe(
      "CA certificate (PEM) the endpoint's certificate chains to: the installation CA; unset = the system's roots.",
    ),
  CONVEYOR_WORKER_TOKEN: z
    .string()
    .regex(/^cvw_/, 'must be a worker token (cvw_...)')
    .describe("The team's worker token (`conveyor worker-token create --team <id>`); a secret."),
  WORKER_ID: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'must be 1-64 characters of [A-Za-z0-9._-]')
    .refine((v) => v !== 'warp', '"warp" means the hosted pool')
    .describe('The ID runs target with `config.worker_host`.'),
  WORKER_CAPACITY: z.coerce
    .number()
    .int()
    .min(1)
    .max(64)
    .default(2)
    .describe('Runs executed at once by this worker.'),
  WORKSPACE_ROOT: z
    .string()
    .default(path.join(os.tmpdir(), 'conveyor-worker-workspaces'))
    .describe('Parent directory of per-run workspaces on this machine.'),
  HEARTBEAT_INTERVAL_MS: z.coerce
    .number()
    .int()
    .positive()
    .default(1000)
    .describe("How often each run's liveness is reported (cancellation and follow-ups come back with it)."),
  HARNESS_COMMANDS: harnessCommands.describe(
    "Agent CLIs for the command harness, by harness type (same format as the runner's).",
  ),
  ...sandboxEnv,
  ...modelProxyEnv,
  RECONNECT_MAX_DELAY_MS: z.coerce
    .number()
    .int()
    .min(100)
    .default(10_000)
    .describe('Longest wait between reconnection attempts after the connection drops.'),
  npm_package_version: z
    .string()
    .default('0.1.0')
    .describe('The version the worker says hello with: npm sets it when the program is started through npm.'),
});

export type WorkerConfig = z.infer<typeof workerSettings>;

export const loadWorkerConfig = (env: NodeJS.ProcessEnv = process.env): WorkerConfig =>
  loadConfig(workerSettings, env);
