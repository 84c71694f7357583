import type { RunnerConfig } from './config';
import type { AdoptionRecords } from './execution/adoption-records';
import type { TurnCheckpoints } from './execution/turn-checkpoints';
import type { RunningModelProxy } from './model-proxy/start-model-proxy';
import type { SandboxBackend, SandboxLimits } from './sandbox/run-sandbox';
import { sandboxLimits } from './sandbox/sandbox-config';

/** What one RunExecutor is built with: the runner and the self-hosted worker program each make theirs here. */
export interface ExecutorOptions {
  runnerId: string;
  heartbeatIntervalMs: number;
  harnessCommands: Record<string, string>;
  sandbox: SandboxBackend;
  /** Hosts every run may reach, before the environment's own. */
  allowedHosts: string[];
  limits: SandboxLimits;
  /** How long a workspace kept after a failed setup waits for a debug session (the orchestrator's debug window). */
  debugRetentionMs: number;
  /** The model proxy runs of CLI harnesses reach their model through; absent = those runs get no model access. */
  modelProxy?: RunningModelProxy;
  /** Where executions whose agents run durable are recorded for the next runner process (docs/run-lifecycle.md). */
  adoptionRecords?: AdoptionRecords;
  /** The records are the runs' leases (Kubernetes): another replica may adopt an execution, which this one then lets go. */
  leased?: boolean;
  /** Where each run's last turn is kept, for a run whose agent is lost with its sandbox (docs/run-lifecycle.md). */
  checkpoints?: TurnCheckpoints;
  /** How often one run may go on from a checkpoint (RUN_MAX_RESUMPTIONS). */
  maxResumptions: number;
}

/** The settings the runner and the self-hosted worker program share. */
type ExecutorSettings = Pick<
  RunnerConfig,
  | 'HEARTBEAT_INTERVAL_MS'
  | 'HARNESS_COMMANDS'
  | 'SANDBOX_ALLOWED_HOSTS'
  | 'RUN_TIMEOUT_MS'
  | 'RUN_MAX_PROCESSES'
  | 'RUN_MEMORY_MB'
  | 'RUN_DISK_MB'
  | 'FAILURE_SESSION_RETENTION_MINUTES'
  | 'RUN_MAX_RESUMPTIONS'
>;

export function executorOptions(
  config: ExecutorSettings,
  runnerId: string,
  sandbox: SandboxBackend,
  modelProxy?: RunningModelProxy,
): ExecutorOptions {
  return {
    runnerId,
    heartbeatIntervalMs: config.HEARTBEAT_INTERVAL_MS,
    harnessCommands: config.HARNESS_COMMANDS,
    sandbox,
    allowedHosts: config.SANDBOX_ALLOWED_HOSTS,
    limits: sandboxLimits(config),
    debugRetentionMs: config.FAILURE_SESSION_RETENTION_MINUTES * 60_000,
    maxResumptions: config.RUN_MAX_RESUMPTIONS,
    modelProxy,
  };
}
