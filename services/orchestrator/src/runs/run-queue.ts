import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { runJobId, type RunJob } from '@conveyor/run-events';

const RUNNER_COUNT_TTL_MS = 1000;

/** The producer side of the run queue. Job IDs are per execution, so repeated enqueues are no-ops. */
export class RunQueue {
  readonly queue: Queue<RunJob>;
  private runners: { count: Promise<number>; at: number } | undefined;

  constructor(
    private readonly connection: Redis,
    name: string,
  ) {
    this.queue = new Queue<RunJob>(name, {
      connection,
      defaultJobOptions: {
        removeOnComplete: { age: 3600, count: 1000 },
        removeOnFail: { age: 24 * 3600 },
        attempts: 1,
      },
    });
    // The queue re-emits its connection's failures, which the connection's owner logs once (logConnectionOutages).
    this.queue.on('error', () => undefined);
  }

  async enqueue(job: RunJob): Promise<void> {
    await this.queue.add('run', job, { jobId: runJobId(job) });
  }

  /** Several jobs in one Redis transaction (BullMQ addBulk); same per-execution job IDs. */
  async enqueueMany(jobs: RunJob[]): Promise<void> {
    if (jobs.length > 0)
      await this.queue.addBulk(
        jobs.map((job) => ({ name: 'run', data: job, opts: { jobId: runJobId(job) } })),
      );
  }

  /** When the oldest waiting job entered the queue (epoch ms); undefined when none waits. */
  async oldestWaitingAt(): Promise<number | undefined> {
    const [oldest] = await this.queue.getJobs(['waiting'], 0, 0, true);
    return oldest?.timestamp;
  }

  /**
   * Runners connected to the queue, read at most once a second: BullMQ counts them with CLIENT LIST, whose answer
   * grows with every Redis client, and every create-run asks (run-capacity.ts).
   */
  connectedRunners(now = Date.now()): Promise<number> {
    if (!this.runners || now - this.runners.at >= RUNNER_COUNT_TTL_MS) {
      const count = this.queue.getWorkersCount();
      this.runners = { count, at: now };
      // A failed count is not kept: the next caller asks Redis again.
      count.catch(() => (this.runners = undefined));
    }
    return this.runners.count;
  }

  /**
   * Whether each execution's job exists, and if so whether it failed (a runner gave it up before claiming the run),
   * in one Redis round trip.
   */
  async jobStates(jobs: RunJob[]): Promise<Array<'missing' | 'failed' | 'present'>> {
    if (jobs.length === 0) return [];
    const pipeline = this.connection.pipeline();
    for (const job of jobs) {
      pipeline.exists(this.queue.toKey(runJobId(job)));
      pipeline.zscore(this.queue.keys.failed!, runJobId(job));
    }
    const replies = (await pipeline.exec()) ?? [];
    return jobs.map((_, i) => {
      const [existsErr, exists] = replies[2 * i] ?? [];
      const [failedErr, failedAt] = replies[2 * i + 1] ?? [];
      if (existsErr || failedErr) throw existsErr ?? failedErr;
      if (exists === 0) return 'missing';
      return failedAt === null ? 'present' : 'failed';
    });
  }

  /** Puts a failed job back in the waiting list (a no-op if it left the failed set meanwhile). */
  async retryFailed(job: RunJob): Promise<void> {
    const found = await this.queue.getJob(runJobId(job));
    if (found && (await found.isFailed())) await found.retry('failed');
  }

  /** Best effort: a cancelled run's job may already be taken, in which case the claim fails instead. */
  async remove(job: RunJob): Promise<void> {
    await this.queue.remove(runJobId(job)).catch(() => 0);
  }

  async close(): Promise<void> {
    await this.queue.close();
  }
}
