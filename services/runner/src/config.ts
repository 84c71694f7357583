import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { commonEnv, grpcTlsEnv, loadConfig, port } from '@conveyor/config';
import { DEFAULT_RUN_QUEUE } from '@conveyor/run-events';
import { harnessCommands } from './harness/harness-config';
import { modelProxyEnv } from './model-proxy/model-proxy-config';
import { sandboxEnv } from './sandbox/sandbox-config';

export const runnerSettings = z.object({
  ...commonEnv,
  REDIS_URL: z
    .string()
    .url()
    .default('redis://127.0.0.1:6379')
    .describe('Redis holding the BullMQ run queue.'),
  ORCHESTRATOR_ADDR: z
    .string()
    .default('127.0.0.1:50051')
    .describe('Orchestrator gRPC address: claims, events, heartbeats and completions go there.'),
  /** Mutual TLS to the orchestrator: the installation CA and this service's certificate and key. */
  ...grpcTlsEnv,
  RUN_QUEUE: z
    .string()
    .min(1)
    .default(DEFAULT_RUN_QUEUE)
    .describe("BullMQ queue runs are taken from (the orchestrator's RUN_QUEUE)."),
  RUNNER_CONCURRENCY: z.coerce
    .number()
    .int()
    .min(1)
    .max(64)
    .default(4)
    .describe('Runs executed at once by this runner process.'),
  RUNNER_ID: z
    .string()
    .min(1)
    .default(() => `runner-${os.hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`)
    .describe("Stable identity in logs and in the run's `runnerId`; unique per process by default."),
  WORKSPACE_ROOT: z
    .string()
    .default(path.join(os.tmpdir(), 'conveyor-workspaces'))
    .describe('Parent directory of per-run workspaces.'),
  HEARTBEAT_INTERVAL_MS: z.coerce
    .number()
    .int()
    .positive()
    .default(1000)
    .describe(
      'How often the runner tells the orchestrator it is alive and asks for cancellation and follow-ups.',
    ),
  HARNESS_COMMANDS: harnessCommands.describe(
    'Agent CLIs for the command harness, by harness type: JSON object such as {"claude": "node adapter.js"}. Operators configure them; API callers can only choose among them.',
  ),
  ...sandboxEnv,
  ...modelProxyEnv,
  HTTP_HOST: z.string().default('127.0.0.1').describe('Listen address of /healthz, /readyz and /metrics.'),
  HTTP_PORT: port(8082).describe('Port of /healthz, /readyz and /metrics.'),
});

export type RunnerConfig = z.infer<typeof runnerSettings>;

export const loadRunnerConfig = (env: NodeJS.ProcessEnv = process.env): RunnerConfig =>
  loadConfig(runnerSettings, env);
