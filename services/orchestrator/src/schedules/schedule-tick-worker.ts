import { Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import type { Logger } from '@conveyor/logger';
import { logConnectionOutages } from '@conveyor/runtime';
import type { TickOutcome } from './fire-schedule-tick';
import type { ScheduleTickJob } from './schedule-tick-queue';

/** BullMQ names each tick `repeat:<scheduleId>:<tick millis>`; the tick time is the part that makes it unique. */
export function tickTimeOf(job: Pick<Job, 'id' | 'opts' | 'timestamp'>): Date {
  const fromId = Number(job.id?.split(':').pop());
  if (Number.isFinite(fromId) && fromId > 0) return new Date(fromId);
  return new Date(job.opts.prevMillis ?? job.timestamp);
}

/**
 * Consumes schedule ticks. Every orchestrator replica runs one; BullMQ hands each tick job to one of them, and
 * the firing row makes the run creation itself idempotent should a tick be processed twice.
 */
export class ScheduleTickWorker {
  private worker: Worker<ScheduleTickJob, TickOutcome> | undefined;
  private connection: Redis | undefined;

  constructor(
    private readonly options: {
      redisUrl: string;
      queueName: string;
      fire: (job: ScheduleTickJob, tickAt: Date) => Promise<TickOutcome>;
      logger: Logger;
    },
  ) {}

  start(): void {
    const { redisUrl, queueName, fire, logger } = this.options;
    // Workers block on Redis: they get a connection of their own (maxRetriesPerRequest: null, as BullMQ requires).
    this.connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
    logConnectionOutages(this.connection, logger, 'redis (schedule tick worker)');
    this.worker = new Worker<ScheduleTickJob, TickOutcome>(
      queueName,
      async (job) => {
        const tickAt = tickTimeOf(job);
        const result = await fire(job.data, tickAt);
        logger.info(
          { scheduleId: job.data.scheduleId, tickAt: tickAt.toISOString(), ...result },
          'schedule tick',
        );
        return result;
      },
      { connection: this.connection, concurrency: 8 },
    );
    this.worker.on('failed', (job, err) =>
      logger.warn(
        { scheduleId: job?.data.scheduleId, jobId: job?.id, err: err.message },
        'schedule tick failed',
      ),
    );
    // The worker reports its connection's failures too; the connection above already logs them once.
    this.worker.on('error', () => undefined);
  }

  /** Waits for ticks in flight, then closes the connection; safe to call twice. */
  async stop(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    try {
      await worker?.close();
    } finally {
      await this.connection?.quit().catch(() => undefined);
      this.connection = undefined;
    }
  }
}
