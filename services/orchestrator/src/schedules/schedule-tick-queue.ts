import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';

/** What every tick job carries: the expression it was scheduled with, so a tick of a replaced expression is recognised. */
export interface ScheduleTickJob {
  scheduleId: string;
  cron: string;
  timezone: string;
}

export interface ScheduledTicks {
  id: string;
  cron: string;
  timezone: string;
}

export const TICK_JOB_NAME = 'tick';

/**
 * The producer side of schedule ticks: one BullMQ job scheduler per enabled schedule, keyed by the schedule ID.
 * BullMQ gives each tick the job ID `repeat:<scheduleId>:<tick millis>`, so a tick is one job however many
 * orchestrators upsert the same scheduler.
 */
export class ScheduleTickQueue {
  readonly queue: Queue<ScheduleTickJob>;

  constructor(connection: Redis, name: string) {
    this.queue = new Queue<ScheduleTickJob>(name, { connection });
    // The queue re-emits its connection's failures, which the connection's owner logs once (logConnectionOutages).
    this.queue.on('error', () => undefined);
  }

  /** Creates the scheduler or replaces its expression; the pending tick of an old expression is replaced at once. */
  async upsert(schedule: ScheduledTicks): Promise<void> {
    await this.queue.upsertJobScheduler(
      schedule.id,
      { pattern: schedule.cron, tz: schedule.timezone },
      {
        name: TICK_JOB_NAME,
        data: { scheduleId: schedule.id, cron: schedule.cron, timezone: schedule.timezone },
        // A transient failure (database unavailable) retries the same tick; the firing row keeps it to one run.
        opts: {
          attempts: 5,
          backoff: { type: 'exponential', delay: 500 },
          removeOnComplete: { age: 3600, count: 1000 },
          removeOnFail: { age: 24 * 3600 },
        },
      },
    );
  }

  /** Removes the scheduler and its pending tick; removing a missing one is a no-op. */
  async remove(scheduleId: string): Promise<void> {
    await this.queue.removeJobScheduler(scheduleId);
  }

  /** Every scheduler in Redis with the expression it fires. */
  async list(): Promise<ScheduledTicks[]> {
    const schedulers = await this.queue.getJobSchedulers(0, -1, true);
    return schedulers.map((s) => ({ id: s.key, cron: s.pattern ?? '', timezone: s.tz ?? '' }));
  }

  async get(scheduleId: string): Promise<ScheduledTicks | null> {
    const s = await this.queue.getJobScheduler(scheduleId);
    return s ? { id: s.key, cron: s.pattern ?? '', timezone: s.tz ?? '' } : null;
  }

  async close(): Promise<void> {
    await this.queue.close();
  }
}
