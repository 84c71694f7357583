import type { PrismaClient } from '@conveyor/db';
import type { Logger } from '@conveyor/logger';
import { BackgroundLoop } from '@conveyor/runtime';

/** Events deleted per statement, so a large backlog never holds long locks. */
const BATCH = 5000;

/**
 * Deletes events that happened before `cutoff` and that no endpoint still has to receive (their deliveries and
 * attempts go with them, by cascade); a pending delivery keeps its event however old, so retention never loses one.
 * Returns how many were deleted.
 */
export async function pruneOutboundEvents(db: PrismaClient, cutoff: Date): Promise<number> {
  let total = 0;
  for (;;) {
    const deleted = await db.$executeRaw`
      DELETE FROM "OutboundEvent" WHERE id IN (
        SELECT o.id FROM "OutboundEvent" o
         WHERE o."occurredAt" < ${cutoff}
           AND NOT EXISTS (SELECT 1 FROM "EventDelivery" d WHERE d."eventId" = o.id AND d.status = 'pending')
         LIMIT ${BATCH})`;
    total += deleted;
    if (deleted < BATCH) return total;
  }
}

/** Prunes events older than `retentionMs` every `intervalMs` (every replica may; the statement is idempotent). */
export function eventRetentionLoop(
  db: PrismaClient,
  logger: Logger,
  options: { retentionMs: number; intervalMs: number },
): BackgroundLoop {
  return new BackgroundLoop({
    name: 'event retention',
    dependency: 'postgres',
    intervalMs: options.intervalMs,
    run: async () => {
      const deleted = await pruneOutboundEvents(db, new Date(Date.now() - options.retentionMs));
      if (deleted > 0) logger.info({ deleted }, 'outbound events pruned');
    },
    logger,
  });
}
