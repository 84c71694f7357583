import type { Prisma, Run } from '@conveyor/db';
import type { RunnerControl } from './runner-messages';

/**
 * What the runner must act on now: cancellation of its execution, and follow-ups waiting for the live harness
 * (taken exactly once: marked delivered in the same transaction that hands them out).
 */
export async function takeRunnerControl(
  tx: Prisma.TransactionClient,
  run: Run,
  execution: number,
): Promise<RunnerControl> {
  const debug = run.debugExecution === execution;
  const cancelled = !debug && (run.state === 'CANCELLED' || run.execution !== execution);
  const pending = await tx.runFollowup.findMany({
    where: { runId: run.id, execution, deliveredAt: null },
    orderBy: { createdAt: 'asc' },
  });
  if (pending.length > 0) {
    await tx.runFollowup.updateMany({
      where: { id: { in: pending.map((f) => f.id) } },
      data: { deliveredAt: new Date() },
    });
  }
  return {
    cancel_requested: cancelled,
    followups: pending.map((f) => ({ followup_id: f.id, message: f.message })),
  };
}
