import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { commonEnv, grpcTlsEnv, loadConfig, port } from '@conveyor/config';
import { DEFAULT_RUN_QUEUE } from '@conveyor/run-events';
import { harnessCommands } from './harness/harness-config';
import { modelProxyEnv } from './model-proxy/model-proxy-config';
import { sandboxEnv } from './sandbox/sandbox-config';

const schema = z.object({
  ...commonEnv,
  /** Redis holding the BullMQ run queue. */
  REDIS_URL: z.string().url().default('redis://127.0.0.1:6379'),
  /** Orchestrator gRPC address: claims, events, heartbeats and completions go there. */
  ORCHESTRATOR_ADDR: z.string().default('127.0.0.1:50051'),
  /** Mutual TLS to the orchestrator: the installation CA and this service's certificate and key. */
  ...grpcTlsEnv,
  RUN_QUEUE: z.string().min(1).default(DEFAULT_RUN_QUEUE),
  /** Runs executed at once by this runner process. */
  RUNNER_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(4),
  /** Stable identity in logs and in the run's `runnerId`; unique per process by default. */
  RUNNER_ID: z
    .string()
    .min(1)
    .default(`runner-${os.hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`),
  /** Parent directory of per-run workspaces. */
  WORKSPACE_ROOT: z.string().default(path.join(os.tmpdir(), 'conveyor-workspaces')),
  /** How often the runner tells the orchestrator it is alive and asks for cancellation and follow-ups. */
  HEARTBEAT_INTERVAL_MS: z.coerce.number().int().positive().default(1000),
  /**
   * Agent CLIs for the command harness, by harness type: JSON object such as {"claude": "node adapter.js"}.
   * Operators configure them; API callers can only choose among them.
   */
  HARNESS_COMMANDS: harnessCommands,
  ...sandboxEnv,
  ...modelProxyEnv,
  HTTP_HOST: z.string().default('127.0.0.1'),
  HTTP_PORT: port(8082),
});

export type RunnerConfig = z.infer<typeof schema>;

export const loadRunnerConfig = (env: NodeJS.ProcessEnv = process.env): RunnerConfig =>
  loadConfig(schema, env);
