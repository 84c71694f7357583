import type { Prisma } from '@conveyor/db';
import type { RunEvent } from '@conveyor/run-events';

type NotDelivered = Extract<RunEvent, { kind: 'followup_not_delivered' }>;

/**
 * The run's execution ended without its harness taking these follow-ups, and it does not go on with them (a cancel
 * wins over them; a lost runner's ERROR is the run's outcome): each gets a `followup_not_delivered` timeline entry so
 * the sender sees it was not heard, rather than its `followup_received` alone. They stay undelivered; sending one
 * again to the ended run continues it (`new_execution`). Called in the transaction that ended the run, after it moved.
 */
export async function recordUndeliveredFollowups(
  tx: Prisma.TransactionClient,
  run: { id: string; execution: number },
  reason: NotDelivered['reason'],
  now: Date,
): Promise<number> {
  const pending = await tx.runFollowup.findMany({
    where: { runId: run.id, execution: run.execution, deliveredAt: null },
    orderBy: { createdAt: 'asc' },
    select: { id: true },
  });
  await tx.runEvent.createMany({
    data: pending.map((f) => {
      const event: NotDelivered = { kind: 'followup_not_delivered', followup_id: f.id, reason };
      return { runId: run.id, execution: run.execution, kind: event.kind, data: event, createdAt: now };
    }),
  });
  return pending.length;
}
