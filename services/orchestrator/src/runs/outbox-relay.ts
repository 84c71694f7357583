import type { PrismaClient } from '@conveyor/db';
import type { Logger } from '@conveyor/logger';
import { runJobSchema } from '@conveyor/run-events';
import { isSelfHostedRun } from '../workers/self-hosted-routing';
import type { RunQueue } from './run-queue';

export const ENQUEUE_RUN = 'enqueue_run';

/** After this many failed relays an entry is left for an operator (its lastError says why). */
const MAX_ATTEMPTS = 20;

/**
 * Relays outbox entries to BullMQ. A run row and its outbox entry commit together; this relay turns the entry into
 * a job (kicked right after the commit, and swept periodically so a crash between commit and enqueue is
 * recovered). Rows are locked with SKIP LOCKED, so several orchestrator replicas share the work.
 */
export class OutboxRelay {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;

  constructor(
    private readonly db: PrismaClient,
    private readonly queue: RunQueue,
    private readonly logger: Logger,
    private readonly intervalMs = 1000,
  ) {}

  start(): void {
    this.timer = setInterval(() => this.kick(), this.intervalMs);
    this.timer.unref();
  }

  /** Relays now; concurrent kicks coalesce into one more pass. */
  kick(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      try {
        do {
          this.again = false;
          while ((await this.relayBatch()) > 0);
        } while (this.again);
      } catch (err) {
        this.logger.warn({ err }, 'outbox relay failed; will retry');
      } finally {
        this.running = undefined;
      }
    })();
    return this.running;
  }

  /** Returns how many entries were relayed; a failing entry is recorded and retried later without blocking others. */
  private async relayBatch(): Promise<number> {
    return this.db.$transaction(async (tx) => {
      const entries = await tx.$queryRaw<Array<{ id: bigint; kind: string; payload: unknown }>>`
        SELECT "id", "kind", "payload" FROM "OutboxEntry"
        WHERE "processedAt" IS NULL AND "attempts" < ${MAX_ATTEMPTS}
        ORDER BY "attempts", "id" LIMIT 50 FOR UPDATE SKIP LOCKED`;
      const relayed: bigint[] = [];
      for (const entry of entries) {
        try {
          if (entry.kind !== ENQUEUE_RUN) throw new Error(`unknown outbox entry kind ${entry.kind}`);
          const job = runJobSchema.parse(entry.payload);
          // Self-hosted runs wait in PostgreSQL for their worker (workers/self-hosted-routing.ts), not in the pool's queue.
          if (!(await isSelfHostedRun(tx, job.runId))) await this.queue.enqueue(job);
          relayed.push(entry.id);
        } catch (err) {
          this.logger.error({ err, outboxId: String(entry.id) }, 'outbox entry could not be relayed');
          await tx.outboxEntry.update({
            where: { id: entry.id },
            data: { attempts: { increment: 1 }, lastError: err instanceof Error ? err.message : String(err) },
          });
        }
      }
      if (relayed.length > 0) {
        await tx.outboxEntry.updateMany({ where: { id: { in: relayed } }, data: { processedAt: new Date() } });
      }
      return relayed.length;
    });
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }
}
