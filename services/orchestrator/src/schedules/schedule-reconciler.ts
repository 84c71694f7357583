import type { PrismaClient } from '@conveyor/db';
import type { Logger } from '@conveyor/logger';
import { BackgroundLoop } from '@conveyor/runtime';
import type { ScheduleTickQueue } from './schedule-tick-queue';
import { syncTicks } from './sync-schedule-ticks';

interface Row {
  id: string;
  enabled: boolean;
  cron: string;
  timezone: string;
}

/**
 * PostgreSQL is the truth, BullMQ's job schedulers follow it. Writes keep them in step, but a crash between a
 * commit and the Redis call (or a Redis that lost its data) leaves them apart: this pass, at start and then
 * periodically, upserts missing or outdated schedulers of running schedules and removes the others. It never
 * touches a scheduler that already matches, so a tick pending from before an outage is kept (docs/schedules.md).
 */
export class ScheduleReconciler {
  readonly loop: BackgroundLoop;

  constructor(
    private readonly deps: { db: PrismaClient; ticks: ScheduleTickQueue; logger: Logger },
    intervalMs: number,
  ) {
    this.loop = new BackgroundLoop({
      name: 'schedule reconciliation',
      dependency: 'redis',
      intervalMs,
      run: () => this.reconcile(),
      logger: deps.logger,
    });
  }

  async reconcile(): Promise<{ upserted: number; removed: number }> {
    const { db, ticks } = this.deps;
    // Schedulers first, rows second: a schedule created in between is then a row with no scheduler (healed
    // below), never a scheduler whose row looks missing.
    const schedulers = new Map((await ticks.list()).map((s) => [s.id, s]));
    const rows = await db.schedule.findMany({
      select: { id: true, enabled: true, cron: true, timezone: true },
    });
    let upserted = 0;
    let removed = 0;
    for (const row of rows) {
      const s = schedulers.get(row.id);
      const inStep = row.enabled
        ? s !== undefined && s.cron === row.cron && s.timezone === row.timezone
        : s === undefined;
      if (inStep) continue;
      // Re-read under the row lock writers take, so a concurrent update is not overwritten with what we read.
      await db.$transaction(async (tx) => {
        const [locked] = await tx.$queryRaw<
          Row[]
        >`SELECT id, enabled, cron, timezone FROM "Schedule" WHERE id = ${row.id} FOR UPDATE`;
        if (!locked) {
          await ticks.remove(row.id);
          removed++;
          return;
        }
        await syncTicks(ticks, locked);
        if (locked.enabled) upserted++;
        else removed++;
      });
    }
    const ids = new Set(rows.map((r) => r.id));
    for (const id of schedulers.keys()) {
      if (ids.has(id)) continue;
      // Rows are committed before their scheduler is created, so a scheduler without a row is an orphan of a delete.
      if (await db.schedule.findUnique({ where: { id }, select: { id: true } })) continue;
      await ticks.remove(id);
      removed++;
    }
    if (upserted || removed) this.deps.logger.info({ upserted, removed }, 'schedulers reconciled');
    return { upserted, removed };
  }

  /** One pass now (a failure is logged and retried with backoff), then one per interval. */
  async start(): Promise<void> {
    this.loop.start();
    await this.loop.settled();
  }

  async stop(): Promise<void> {
    await this.loop.stop();
  }
}
