import type { PrismaClient } from '@conveyor/db';
import type { Logger } from '@conveyor/logger';
import type { RunJob } from '@conveyor/run-events';
import { BackgroundLoop } from '@conveyor/runtime';
import type { RunQueue } from './run-queue';

/** QUEUED runs checked per statement and Redis round trip. */
const BATCH = 500;

export interface QueueRepair {
  /** Runs whose job was missing from Redis: enqueued again. */
  enqueued: number;
  /** Runs whose job had failed without the run being claimed (a runner that could not reach us): retried. */
  retried: number;
}

/**
 * PostgreSQL is the truth about which runs wait; BullMQ only carries them to runners. A Redis that lost its data
 * (a restart without persistence, a failover, FLUSHALL) or a job a runner dropped before claiming would leave a run
 * QUEUED forever: each pass finds the pool's QUEUED runs whose current execution has no job, or only a failed one,
 * and puts it back. Idempotent: job IDs are per execution (`<runId>-e<execution>`), so enqueueing a run the outbox
 * relay is enqueueing at the same moment adds one job, and claiming an execution is a compare-and-set, so a job
 * for an execution already taken is skipped by the runner.
 */
export class RunQueueReconciler {
  readonly loop: BackgroundLoop;

  constructor(
    private readonly deps: { db: PrismaClient; queue: RunQueue; logger: Logger },
    intervalMs: number,
  ) {
    this.loop = new BackgroundLoop({
      name: 'run queue reconciliation',
      dependency: 'redis',
      intervalMs,
      run: () => this.reconcile(),
      logger: deps.logger,
    });
  }

  start(): void {
    this.loop.start();
  }

  async stop(): Promise<void> {
    await this.loop.stop();
  }

  async reconcile(): Promise<QueueRepair> {
    const repair: QueueRepair = { enqueued: 0, retried: 0 };
    let after = '';
    for (;;) {
      // Self-hosted runs wait in PostgreSQL for their worker (runs/self-hosted-routing.ts), never in Redis.
      const runs = await this.deps.db.run.findMany({
        where: { state: 'QUEUED', workerHost: null, ...(after ? { id: { gt: after } } : {}) },
        orderBy: { id: 'asc' },
        take: BATCH,
        select: { id: true, execution: true },
      });
      if (runs.length === 0) break;
      const found = await this.repair(runs.map((r) => ({ runId: r.id, execution: r.execution })));
      repair.enqueued += found.enqueued;
      repair.retried += found.retried;
      after = runs[runs.length - 1]!.id;
      if (runs.length < BATCH) break;
    }
    if (repair.enqueued || repair.retried)
      this.deps.logger.warn({ ...repair }, 'queued runs without a live job put back on the run queue');
    return repair;
  }

  private async repair(jobs: RunJob[]): Promise<QueueRepair> {
    const { queue } = this.deps;
    const states = await queue.jobStates(jobs);
    const missing = jobs.filter((_, i) => states[i] === 'missing');
    const failed = jobs.filter((_, i) => states[i] === 'failed');
    await queue.enqueueMany(missing);
    for (const job of failed) await queue.retryFailed(job);
    return { enqueued: missing.length, retried: failed.length };
  }
}
