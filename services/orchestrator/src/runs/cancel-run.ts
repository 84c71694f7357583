import { AppError } from '@conveyor/errors';
import type { PrismaClient, Run } from '@conveyor/db';
import type { Caller } from '../auth/caller';
import { findRunForCaller } from './run-access';
import type { RunQueue } from './run-queue';
import { isTerminal, transitionRun } from './run-state-machine';
import { recordUndeliveredFollowups } from './undelivered-followups';

/** Run types the platform cannot stop from here (contract §2.10). */
export function isCancellableType(run: Pick<Run, 'source' | 'executionLocation' | 'workerHost'>): boolean {
  return (
    run.source !== 'GITHUB_ACTION' &&
    run.source !== 'LOCAL' &&
    run.executionLocation !== 'LOCAL' &&
    !run.workerHost
  );
}

/** Why a run cannot be cancelled in its present state, or undefined when it can (contract §2.10). */
export function cancelRefusal(
  run: Pick<Run, 'source' | 'executionLocation' | 'workerHost' | 'state'>,
): AppError | undefined {
  if (!isCancellableType(run)) {
    return new AppError(
      'operation_not_supported',
      'Runs executed by self-hosted workers, locally or by GitHub Actions cannot be cancelled here',
    );
  }
  if (run.state === 'PENDING')
    return new AppError(
      'conflict',
      'The run is being prepared and cannot be cancelled right now; retry shortly',
    );
  if (isTerminal(run.state))
    return new AppError(
      'invalid_request',
      `The run has already ended (${run.state}) and cannot be cancelled`,
    );
  return undefined;
}

/**
 * QUEUED, CLAIMED and INPROGRESS runs move to CANCELLED at once; a running harness learns it on the runner's next
 * heartbeat (about a second) and is stopped; follow-ups its harness has not taken are recorded as not delivered. PENDING answers 409 (retryable: setup is moving the run on),
 * ended runs 400, unsupported types 422.
 */
export async function cancelRun(
  deps: { db: PrismaClient; queue: RunQueue },
  caller: Caller,
  runId: string,
): Promise<{ run_id: string }> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const run = await findRunForCaller(deps.db, caller, runId);
    const refusal = cancelRefusal(run);
    if (refusal) throw refusal;
    const moved = await deps.db.$transaction(async (tx) => {
      const now = new Date();
      if (!(await transitionRun(tx, run, run.state, 'CANCELLED', { message: 'Cancelled by user', now })))
        return false;
      await recordUndeliveredFollowups(tx, run, 'run_cancelled', now);
      return true;
    });
    if (moved) {
      if (run.state === 'QUEUED') await deps.queue.remove({ runId: run.id, execution: run.execution });
      return { run_id: run.id };
    }
    // Lost a race with a claim or completion: decide again on the fresh state.
  }
  throw new AppError('conflict', 'The run changed state while cancelling; retry');
}
