import type { Prisma, Run } from '@conveyor/db';
import type { RunnerControl } from './runner-messages';

/**
 * What the runner must act on now: cancellation of its execution, and follow-ups waiting for the live harness
 * (marked delivered in the same transaction that hands them out, unless the runner acknowledges them: `markDelivered`
 * false leaves them pending until it does).
 */
export async function takeRunnerControl(
  tx: Prisma.TransactionClient,
  run: Run,
  execution: number,
  { markDelivered = true } = {},
): Promise<RunnerControl> {
  const debug = run.debugExecution === execution;
  const cancelled = !debug && (run.state === 'CANCELLED' || run.execution !== execution);
  const pending = await tx.runFollowup.findMany({
    where: { runId: run.id, execution, deliveredAt: null },
    orderBy: { createdAt: 'asc' },
  });
  if (markDelivered && pending.length > 0) {
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
