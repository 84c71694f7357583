import type { PrismaClient } from '@conveyor/db';
import type { Logger } from '@conveyor/logger';
import { BackgroundLoop } from '@conveyor/runtime';

export const RETENTION_KEEP_PER_WEBHOOK = 50;
export const RETENTION_MIN_AGE_MS = 7 * 24 * 60 * 60 * 1000;

export interface RetentionOptions {
  /** Entries younger than this are always kept (7 days). */
  minAgeMs?: number;
  /** The newest entries of each webhook are always kept, however old (50). */
  keepPerWebhook?: number;
  /** At most this many entries are deleted per statement, so a large backlog never holds long locks. */
  batchSize?: number;
}

/**
 * Deletes delivery-log entries that are both older than 7 days and outside their webhook's 50 most recent, so the
 * log always keeps at least the 50 most recent deliveries and 7 days of history. Returns how many were deleted.
 */
export async function pruneDeliveryLog(
  db: PrismaClient,
  now: Date,
  options: RetentionOptions = {},
): Promise<number> {
  const cutoff = new Date(now.getTime() - (options.minAgeMs ?? RETENTION_MIN_AGE_MS));
  const keep = options.keepPerWebhook ?? RETENTION_KEEP_PER_WEBHOOK;
  const batch = options.batchSize ?? 5000;
  let total = 0;
  for (;;) {
    const deleted = await db.$executeRaw`
      DELETE FROM "WebhookDelivery" WHERE id IN (
        SELECT id FROM (
          SELECT id, "receivedAt",
                 row_number() OVER (PARTITION BY "webhookId" ORDER BY "receivedAt" DESC, id DESC) AS rank
          FROM "WebhookDelivery"
          WHERE "webhookId" IN (SELECT DISTINCT "webhookId" FROM "WebhookDelivery" WHERE "receivedAt" < ${cutoff})
        ) ranked
        WHERE ranked."receivedAt" < ${cutoff} AND ranked.rank > ${keep}
        LIMIT ${batch}
      )`;
    total += deleted;
    if (deleted < batch) return total;
  }
}

/** Runs the pruning periodically (every replica may run it; the statement is idempotent). */
export class DeliveryRetention {
  private readonly loop: BackgroundLoop;

  constructor(
    private readonly db: PrismaClient,
    private readonly logger: Logger,
    intervalMs: number,
    private readonly options: RetentionOptions = {},
  ) {
    this.loop = new BackgroundLoop({
      name: 'delivery log retention',
      dependency: 'postgres',
      intervalMs,
      run: () => this.runOnce(),
      logger,
    });
  }

  start(): void {
    this.loop.start();
  }

  async runOnce(now = new Date()): Promise<void> {
    const deleted = await pruneDeliveryLog(this.db, now, this.options);
    if (deleted > 0) this.logger.info({ deleted }, 'delivery log pruned');
  }

  async stop(): Promise<void> {
    await this.loop.stop();
  }
}
