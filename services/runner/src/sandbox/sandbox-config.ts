import { z } from 'zod';
import { csv } from '@conveyor/config';
import { SANDBOX_BACKENDS } from './sandbox-backends';
import type { SandboxLimits } from './run-sandbox';

/** Sandbox settings shared by the runner and the self-hosted worker program (docs/sandbox.md). */
export const sandboxEnv = {
  /** Isolation backend for everything a run executes. `none` is for development only and is logged loudly. */
  RUN_SANDBOX: z.enum(SANDBOX_BACKENDS),
  /** Hosts every run may reach (model providers, git hosts, registries): names or `*.suffix`, comma-separated. */
  SANDBOX_ALLOWED_HOSTS: csv(''),
  /** Wall-clock budget of one execution. */
  RUN_TIMEOUT_MS: z.coerce.number().int().positive().default(60 * 60 * 1000),
  /** Processes one run may have at once. */
  RUN_MAX_PROCESSES: z.coerce.number().int().min(8).default(512),
  /** Memory of one run's processes together, in MiB. */
  RUN_MEMORY_MB: z.coerce.number().int().min(64).default(4096),
  /** Size the workspace may reach, in MiB. */
  RUN_DISK_MB: z.coerce.number().int().min(16).default(10 * 1024),
};

export function sandboxLimits(config: { RUN_TIMEOUT_MS: number; RUN_MAX_PROCESSES: number; RUN_MEMORY_MB: number; RUN_DISK_MB: number }): SandboxLimits {
  return {
    wallClockMs: config.RUN_TIMEOUT_MS,
    maxProcesses: config.RUN_MAX_PROCESSES,
    memoryBytes: config.RUN_MEMORY_MB * 1024 * 1024,
    diskBytes: config.RUN_DISK_MB * 1024 * 1024,
  };
}
