import { Prisma, type PrismaClient } from '@conveyor/db';
import type { Logger } from '@conveyor/logger';
import { BackgroundLoop } from '@conveyor/runtime';
import { runJobSchema, type RunJob } from '@conveyor/run-events';
import { contextFromCarrier, currentTraceCarrier, startSpan, trace } from '@conveyor/tracing';
import type { RunQueue } from './run-queue';

export const ENQUEUE_RUN = 'enqueue_run';

/** After this many failed relays an entry is left for an operator (its lastError says why). */
const MAX_ATTEMPTS = 20;

/** Entries relayed per pass (one transaction, one BullMQ addBulk). */
const RELAY_BATCH = 50;

const UUID_PATTERN = '^[0-9a-f]{8}-([0-9a-f]{4}-){3}[0-9a-f]{12}$';

/**
 * The next entries to relay, locked, each with whether its run is self-hosted. The run is found through its primary
 * key: the payload's ID is compared as a uuid (a malformed one finds no run instead of failing the batch), never
 * `id::text`, which would scan every run for every entry.
 */
export const pendingEntries = (limit: number): Prisma.Sql => Prisma.sql`
  SELECT o.id, o.kind, o.payload, r."workerHost" IS NOT NULL AS "selfHosted"
    FROM "OutboxEntry" o
    LEFT JOIN "Run" r ON r.id = CASE WHEN o.payload->>'runId' ~* ${UUID_PATTERN} THEN (o.payload->>'runId')::uuid END
   WHERE o.attempts < ${MAX_ATTEMPTS}
   ORDER BY o.attempts, o.id LIMIT ${limit} FOR UPDATE OF o SKIP LOCKED`;

/**
 * Relays outbox entries to BullMQ. A run row and its outbox entry commit together; this relay turns the entry into
 * a job (kicked right after the commit, and swept periodically so a crash between commit and enqueue is
 * recovered). Rows are locked with SKIP LOCKED, so several orchestrator replicas share the work. While PostgreSQL or
 * Redis is down its loop backs off and the entries wait; none is charged an attempt for an outage.
 */
export class OutboxRelay {
  readonly loop: BackgroundLoop;

  constructor(
    private readonly db: PrismaClient,
    private readonly queue: RunQueue,
    private readonly logger: Logger,
    intervalMs = 1000,
  ) {
    this.loop = new BackgroundLoop({
      name: 'outbox relay',
      dependency: 'postgres',
      intervalMs,
      run: () => this.relayAll(),
      logger,
    });
  }

  start(): void {
    this.loop.start();
  }

  /** Relays now; concurrent kicks coalesce into one more pass. Never rejects. */
  kick(): Promise<void> {
    return this.loop.trigger();
  }

  private async relayAll(): Promise<void> {
    // A short batch was everything there was: no empty pass to find that out.
    while ((await this.relayBatch()) === RELAY_BATCH);
  }

  /**
   * Returns how many entries were relayed. A pass is one transaction of three statements whatever its size: the
   * locked batch (with whether each run is self-hosted), one BullMQ addBulk, and deleting what was enqueued. An entry
   * that cannot be parsed stays with its error and is retried later; a batch Redis refused (it is down) rolls back
   * whole, for the loop to retry after its backoff: job IDs are per execution, so a batch enqueued twice is one.
   */
  private async relayBatch(): Promise<number> {
    return this.db.$transaction(async (tx) => {
      // Self-hosted runs wait in PostgreSQL for their worker (runs/self-hosted-routing.ts), not in the pool's queue.
      const entries = await tx.$queryRaw<
        Array<{ id: bigint; kind: string; payload: unknown; selfHosted: boolean }>
      >(pendingEntries(RELAY_BATCH));
      const failed = async (ids: bigint[], err: unknown) => {
        this.logger.error({ err, outboxIds: ids.map(String) }, 'outbox entries could not be relayed');
        await tx.outboxEntry.updateMany({
          where: { id: { in: ids } },
          data: { attempts: { increment: 1 }, lastError: err instanceof Error ? err.message : String(err) },
        });
      };
      const jobs: Array<{ id: bigint; job: RunJob; selfHosted: boolean }> = [];
      for (const entry of entries) {
        try {
          if (entry.kind !== ENQUEUE_RUN) throw new Error(`unknown outbox entry kind ${entry.kind}`);
          jobs.push({ id: entry.id, job: runJobSchema.parse(entry.payload), selfHosted: entry.selfHosted });
        } catch (err) {
          await failed([entry.id], err);
        }
      }
      if (jobs.length === 0) return entries.length;
      const relayed = jobs.filter((j) => !j.selfHosted).map((j) => relayedJob(j.job));
      try {
        await this.queue.enqueueMany(relayed.map((r) => r.job));
      } finally {
        for (const r of relayed) r.span?.end();
      }
      // A relayed entry has done its work; deleting it keeps the table as small as the backlog.
      await tx.$executeRaw`DELETE FROM "OutboxEntry" WHERE id = ANY(${jobs.map((j) => j.id)}::bigint[])`;
      return entries.length;
    });
  }

  async stop(): Promise<void> {
    await this.loop.stop();
  }
}

/** The job of a traced run continues its trace from a relay span, so the wait in the outbox shows in it. */
function relayedJob(job: RunJob): { job: RunJob; span?: ReturnType<typeof startSpan> } {
  if (!job.trace) return { job };
  const parent = contextFromCarrier(job.trace);
  const span = startSpan('outbox relay', parent, { 'conveyor.run_id': job.runId });
  return { job: { ...job, trace: currentTraceCarrier(trace.setSpan(parent, span)) }, span };
}
