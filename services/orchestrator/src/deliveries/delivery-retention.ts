import type { PrismaClient } from '@conveyor/db';
import type { Logger } from '@conveyor/logger';

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
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly db: PrismaClient,
    private readonly logger: Logger,
    private readonly intervalMs: number,
    private readonly options: RetentionOptions = {},
  ) {}

  start(): void {
    const tick = () => {
      this.running = this.runOnce().finally(() => {
        this.running = undefined;
      });
    };
    this.timer = setInterval(tick, this.intervalMs);
    this.timer.unref();
    tick();
  }

  async runOnce(now = new Date()): Promise<void> {
    try {
      const deleted = await pruneDeliveryLog(this.db, now, this.options);
      if (deleted > 0) this.logger.info({ deleted }, 'delivery log pruned');
    } catch (err) {
      this.logger.warn({ err }, 'delivery log pruning failed');
    }
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }
}
