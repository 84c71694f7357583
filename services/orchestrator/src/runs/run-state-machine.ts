import { AppError } from '@conveyor/errors';
import type { Prisma, RunState } from '@conveyor/db';
import { TERMINAL_STATES, type RunEvent } from '@conveyor/run-events';
import { revokeRunApiKeys } from '../auth/run-api-key';

/**
 * Allowed moves. QUEUED → CLAIMED (a runner took the job) → PENDING (environment being prepared) → INPROGRESS
 * (harness running) → a terminal state. Ended runs go back to QUEUED only through a follow-up (new execution);
 * a runner lost before the harness started puts the run back to QUEUED.
 */
export const TRANSITIONS: Readonly<Record<RunState, readonly RunState[]>> = {
  QUEUED: ['CLAIMED', 'CANCELLED', 'ERROR'],
  CLAIMED: ['PENDING', 'INPROGRESS', 'QUEUED', 'SUCCEEDED', 'FAILED', 'ERROR', 'BLOCKED', 'CANCELLED'],
  PENDING: ['INPROGRESS', 'QUEUED', 'SUCCEEDED', 'FAILED', 'ERROR', 'BLOCKED', 'CANCELLED'],
  INPROGRESS: ['SUCCEEDED', 'FAILED', 'ERROR', 'BLOCKED', 'CANCELLED'],
  SUCCEEDED: ['QUEUED'],
  FAILED: ['QUEUED'],
  ERROR: ['QUEUED'],
  BLOCKED: ['QUEUED'],
  CANCELLED: ['QUEUED'],
};

/**
 * The states a runner moves its own run through, in order (ClaimRun, then ReportEvents' `state_changed` events); every
 * later one is reachable from every earlier one, none backwards (run-state-machine.test.ts holds this against
 * TRANSITIONS). report-events.ts ranks them by their place here.
 */
export const RUNNER_PROGRESS = ['CLAIMED', 'PENDING', 'INPROGRESS'] as const satisfies readonly RunState[];

export const canTransition = (from: RunState, to: RunState): boolean => TRANSITIONS[from].includes(to);
export const isTerminal = (state: RunState): boolean => TERMINAL_STATES.has(state);

export interface TransitionOptions {
  message?: string;
  errorCode?: string;
  retryable?: boolean;
  now?: Date;
  extra?: Prisma.RunUpdateManyMutationInput;
  /** What else the run must still hold when it moves, checked in the same statement as its state. */
  onlyIf?: Prisma.RunWhereInput;
}

/**
 * Moves a run from `from` to `to` only if it is still in `from` (compare-and-set, so concurrent cancels, claims and
 * completions cannot both win), stamping times and recording the state change in the run's event log.
 * Returns false when another writer got there first.
 */
export async function transitionRun(
  tx: Prisma.TransactionClient,
  run: { id: string; execution: number },
  from: RunState,
  to: RunState,
  options: TransitionOptions = {},
): Promise<boolean> {
  if (!canTransition(from, to)) {
    throw new AppError('conflict', `A run cannot move from ${from} to ${to}`);
  }
  const now = options.now ?? new Date();
  const terminal = isTerminal(to);
  const result = await tx.run.updateMany({
    where: { ...options.onlyIf, id: run.id, state: from, execution: run.execution },
    data: {
      state: to,
      updatedAt: now,
      ...(to === 'INPROGRESS' ? { startedAt: now } : {}),
      ...(terminal ? { endedAt: now } : {}),
      ...(options.message !== undefined || terminal
        ? {
            statusMessage: options.message ?? null,
            errorCode: options.errorCode ?? null,
            retryable: options.retryable ?? null,
          }
        : {}),
      ...options.extra,
    },
  });
  if (result.count === 0) return false;
  // The execution is over or handed back to the queue: its run-scoped key must not outlive it, nor its adoption
  // record (run-leases.ts: it holds that key and the model token, sealed), which no runner may adopt any more.
  if (terminal || to === 'QUEUED') {
    await revokeRunApiKeys(tx, run.id, now);
    await tx.runLease.deleteMany({ where: { runId: run.id } });
  }
  const event: RunEvent = {
    kind: 'state_changed',
    from,
    to,
    ...(options.message ? { message: options.message } : {}),
    ...(options.errorCode ? { error_code: options.errorCode } : {}),
  };
  await tx.runEvent.create({
    data: { runId: run.id, execution: run.execution, kind: event.kind, data: event, createdAt: now },
  });
  return true;
}
