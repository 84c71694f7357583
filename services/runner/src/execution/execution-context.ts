import type { Logger } from '@conveyor/logger';
import type { RunAssignment__Output } from '@conveyor/proto';
import type { RunEvent } from '@conveyor/run-events';
import type { EventReporter } from '../event-reporter';
import type { FollowupInbox } from '../harness/followup-inbox';
import type { HarnessOutcome, SessionFile } from '../harness/harness';
import type { RunTrace } from './run-trace';

export type SetupStep = Extract<RunEvent, { kind: 'setup_step' }>;

/** How one execution ends, as reported to the orchestrator with CompleteRun. */
export interface Completion {
  state: HarnessOutcome['state'] | 'CANCELLED';
  message: string;
  errorCode?: string;
  setupFailed?: boolean;
  transcript?: Buffer;
  session?: SessionFile;
}

/** What the parts of an execution report through: events, the flush before INPROGRESS, the run's redactor. */
export type RunReporter = Pick<EventReporter, 'emit' | 'flush' | 'redactor'>;

/**
 * One execution of one run, built once when it is claimed and handed to every part of it (lifecycle, model access,
 * workspace and sandbox, harness drive, after-run work).
 */
export interface ExecutionContext {
  readonly assignment: RunAssignment__Output;
  /** The gRPC target of every call about this execution. */
  readonly target: { run_id: string; execution: number; runner_id: string };
  readonly log: Logger;
  readonly reporter: RunReporter;
  /** Follow-ups that arrive while the harness runs. */
  readonly inbox: FollowupInbox;
  /** Aborted when the run is cancelled or halted, or the runner stops. */
  readonly signal: AbortSignal;
  /**
   * Aborted when another runner took the execution over (its lease expired or was released; Kubernetes): this one lets
   * go of the sandbox, whose agent is now the adopter's, and ends nothing. Set only where runs move between replicas.
   */
  readonly takenOver?: AbortSignal;
  /** Ends the execution early with this outcome (the budget ran out, the key was refused), rather than as cancelled. */
  halt(completion: Completion): void;
  readonly trace: RunTrace;
}

/** Reports a setup step on the run's timeline. */
export const reportStep = (
  ctx: Pick<ExecutionContext, 'reporter'>,
  step: SetupStep['step'],
  status: SetupStep['status'],
  detail?: string,
): void => ctx.reporter.emit({ kind: 'setup_step', step, status, ...(detail ? { detail } : {}) });

export const overBudget = (spentUsd: number, budgetUsd: number): Completion => ({
  state: 'FAILED',
  message: `The run exceeded its budget of $${budgetUsd.toFixed(4)} (spent $${spentUsd.toFixed(4)})`,
  errorCode: 'budget_exceeded',
});
