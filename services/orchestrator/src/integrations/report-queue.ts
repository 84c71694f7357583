import { Prisma, type PrismaClient } from '@conveyor/db';
import type { Logger } from '@conveyor/logger';
import { BackgroundLoop } from '@conveyor/runtime';
import pLimit from 'p-limit';
import { nextAttemptDelay } from '../events/retry-schedule';

/** What sending one queued report came to. */
export type Sent =
  | { kind: 'done' }
  /** The provider refused the report itself (or it is moot): not retried. */
  | { kind: 'dropped'; reason: string }
  /** The provider could not take it now (down, 5xx, rate limited): retried on the schedule. */
  | { kind: 'retry'; reason: string; retryAfterMs?: number }
  /** The provider refused the integration's credentials: the integration is marked broken with its reason. */
  | { kind: 'refused'; reason: string };

/** The columns every report queue has; `owner` is the integration that owes the report. */
export interface QueuedReport {
  id: bigint;
  runId: string;
  owner: string;
  attempts: number;
}

/** The tables queued this way (an identifier in the SQL, never anything a caller chose). */
type QueueTable = 'SlackPost' | 'LinearReport' | 'GitHubAppReport';

/** What a table's queue is: fixed by the sender that owns the table. */
export interface ReportQueueShape {
  name: string;
  table: QueueTable;
  /** The column naming the integration that owes the report. */
  ownerColumn: string;
  /** The table's own columns each send needs. */
  columns: readonly string[];
  /** Settled reports stay as rows with their status (pending | done | failed) instead of being deleted. */
  keepSettled: boolean;
  /** Reports claimed per pass, and sent at the same time. */
  batch: number;
  concurrency: number;
  /** A claimed report is due again after this (a crashed orchestrator's claims are taken over): longer than a send. */
  leaseMs: number;
}

/** What a queue runs with: its sender's dependencies (passed whole) and the sender's two callbacks. */
export interface ReportQueueWiring<Row> {
  /** Waits before each attempt (nextAttemptDelay's schedule): once spent, the report is dropped. */
  schedule: readonly number[];
  intervalMs: number;
  db: PrismaClient;
  logger: Logger;
  send: (report: QueuedReport & Row, log: Logger) => Promise<Sent>;
  /** Marks the owner broken with the provider's reason (and forgets what it still owed, if the owner does that). */
  markBroken: (ownerId: string, reason: string) => Promise<void>;
}

/**
 * The queue the integrations' reports to their providers go through (Slack thread posts, Linear comments, GitHub check
 * runs and answers): rows written with what they report (a trigger on the run state change, or the same
 * transaction), sent by a loop. A pass claims the due reports by pushing their `nextAttemptAt` past a lease (FOR
 * UPDATE SKIP LOCKED: replicas share the work; a crashed claim comes due again), only the oldest pending one of each
 * run (a run's reports reach the provider in the order they were written), and sends them. An outage is retried on
 * the schedule across restarts; a refusal drops the report; refused credentials mark the integration broken, and
 * its later reports are dropped by their sender without calling the provider: nothing loops on a credential that
 * cannot work.
 */
export class ReportQueue<Row extends object> {
  readonly loop: BackgroundLoop;
  private readonly claimSql: Prisma.Sql;

  constructor(
    private readonly shape: ReportQueueShape,
    private readonly wiring: ReportQueueWiring<Row>,
  ) {
    const table = Prisma.raw(`"${shape.table}"`);
    const pending = Prisma.raw(shape.keepSettled ? `AND s.status = 'pending'` : '');
    const earlier = Prisma.raw(shape.keepSettled ? `AND e.status = 'pending'` : '');
    const columns = Prisma.raw(shape.columns.map((c) => `, p."${c}"`).join(''));
    this.claimSql = Prisma.sql`
      UPDATE ${table} p SET "nextAttemptAt" = now() + ${shape.leaseMs} * interval '1 millisecond'
        FROM (SELECT s.id FROM ${table} s
               WHERE s."nextAttemptAt" <= now() ${pending}
                 AND NOT EXISTS (SELECT 1 FROM ${table} e WHERE e."runId" = s."runId" AND e.id < s.id ${earlier})
               ORDER BY s.id LIMIT ${shape.batch} FOR UPDATE SKIP LOCKED) due
       WHERE p.id = due.id
      RETURNING p.id, p."runId"::text AS "runId", p.${Prisma.raw(`"${shape.ownerColumn}"`)} AS owner,
                p.attempts ${columns}`;
    this.loop = new BackgroundLoop({
      name: shape.name,
      dependency: 'postgres',
      intervalMs: wiring.intervalMs,
      run: () => this.drain(),
      logger: wiring.logger,
    });
  }

  start(): void {
    this.loop.start();
  }

  kick(): Promise<void> {
    return this.loop.trigger();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** Passes until nothing is due: a run's next report is due once the one before it settled. */
  async drain(): Promise<void> {
    while ((await this.pass()) > 0);
  }

  private async pass(): Promise<number> {
    const claimed = await this.wiring.db.$queryRaw<Array<QueuedReport & Row>>(this.claimSql);
    const limit = pLimit(this.shape.concurrency);
    const results = await Promise.allSettled(claimed.map((report) => limit(() => this.process(report))));
    // A report whose sending threw (the database) comes due again when its lease ends.
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
    return claimed.length;
  }

  private async process(report: QueuedReport & Row): Promise<void> {
    const { logger, schedule } = this.wiring;
    const log = logger.child({ runId: report.runId, owner: report.owner, report: String(report.id) });
    const sent = await this.wiring.send(report, log);
    const attempts = report.attempts + 1;
    if (sent.kind === 'done') return this.settle(report, 'done', null);
    if (sent.kind === 'refused') {
      log.warn(
        { provider: sent.reason },
        'the provider refused the credentials: the integration is marked broken',
      );
      await this.wiring.markBroken(report.owner, sent.reason);
      return this.settle(report, 'failed', sent.reason);
    }
    const delay = sent.kind === 'retry' ? nextAttemptDelay(schedule, attempts, sent.retryAfterMs) : undefined;
    if (delay === undefined) {
      log.warn({ provider: sent.reason, attempts }, 'report dropped');
      return this.settle(report, 'failed', sent.reason);
    }
    log.info({ provider: sent.reason, attempts, retryInMs: delay }, 'report failed; retrying later');
    await this.wiring.db.$executeRaw`
      UPDATE ${Prisma.raw(`"${this.shape.table}"`)}
         SET attempts = ${attempts}, "lastError" = ${sent.reason.slice(0, 500)},
             "nextAttemptAt" = now() + ${delay} * interval '1 millisecond'
       WHERE id = ${report.id}`;
  }

  private async settle(report: QueuedReport, status: 'done' | 'failed', error: string | null): Promise<void> {
    // The table inline as a Prisma.raw fragment, so raw-sql.int.test sees these statements are built at run time.
    if (!this.shape.keepSettled) {
      await this.wiring.db
        .$executeRaw`DELETE FROM ${Prisma.raw(`"${this.shape.table}"`)} WHERE id = ${report.id}`;
      return;
    }
    await this.wiring.db.$executeRaw`
      UPDATE ${Prisma.raw(`"${this.shape.table}"`)} SET status = ${status}, attempts = ${report.attempts + 1},
             "lastError" = ${error?.slice(0, 500) ?? null}
       WHERE id = ${report.id}`;
  }
}
