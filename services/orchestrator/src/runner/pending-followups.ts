import type { PrismaClient } from '@conveyor/db';
import { continueRun } from '../runs/submit-followup';
import { lockRun } from './report-events';
import type { RunnerExecution } from './runner-messages';

/**
 * An execution ended with follow-ups its harness never took (sent after the agent's last turn, or in the batch the
 * completion carried, and not acknowledged by the runner): they are not dropped. The run goes on as its next
 * execution with them as its input, as a follow-up sent to the ended run would have (docs/run-lifecycle.md
 * "Follow-ups at the end of an execution"). Not a run that ended CANCELLED (the later cancel wins: they stay
 * undelivered), nor one that moved on meanwhile. Idempotent: a replayed completion finds them moved already.
 */
export async function continueWithUnheardFollowups(
  db: PrismaClient,
  ended: Pick<RunnerExecution, 'run_id' | 'execution'>,
  now: Date,
): Promise<void> {
  await db.$transaction(async (tx) => {
    const run = await lockRun(tx, ended.run_id);
    if (!run || run.execution !== ended.execution || run.runnerId !== null) return;
    if (run.state === 'CANCELLED' || run.debugExecution === run.execution) return;
    const unheard = { runId: run.id, execution: run.execution, deliveredAt: null };
    if ((await tx.runFollowup.count({ where: unheard })) === 0) return;
    const execution = await continueRun(tx, run, now);
    await tx.runFollowup.updateMany({ where: unheard, data: { execution } });
  });
}
