import type { PrismaClient } from '@conveyor/db';
import type { Logger } from '@conveyor/logger';
import type { Redis } from 'ioredis';
import type { OrchestratorConfig } from '../config';
import { fireScheduleTick } from './fire-schedule-tick';
import { ScheduleReconciler } from './schedule-reconciler';
import { ScheduleTickQueue } from './schedule-tick-queue';
import type { CreateRunDeps } from '../runs/create-run';
import { ScheduleTickWorker } from './schedule-tick-worker';

export interface ScheduleModuleDeps {
  config: Pick<OrchestratorConfig, 'REDIS_URL' | 'SCHEDULE_QUEUE' | 'SCHEDULE_RECONCILE_INTERVAL_MS'>;
  db: PrismaClient;
  redis: Redis;
  logger: Logger;
  /** How runs start (shared with the API), including the catalog checks. */
  runDeps: CreateRunDeps;
}

/**
 * Scheduled agents wired for the orchestrator (docs/schedules.md): the tick queue's job
 * schedulers, the worker that turns ticks into runs, and the reconciler that keeps Redis in step with PostgreSQL.
 */
export class ScheduleModule {
  readonly ticks: ScheduleTickQueue;
  private readonly worker: ScheduleTickWorker;
  private readonly reconciler: ScheduleReconciler;

  constructor({ config, db, redis, logger, runDeps }: ScheduleModuleDeps) {
    this.ticks = new ScheduleTickQueue(redis, config.SCHEDULE_QUEUE);
    this.worker = new ScheduleTickWorker({
      redisUrl: config.REDIS_URL,
      queueName: config.SCHEDULE_QUEUE,
      fire: (job, tickAt) => fireScheduleTick(runDeps, job, tickAt),
      logger: logger.child({ component: 'schedule-ticks' }),
    });
    this.reconciler = new ScheduleReconciler(
      { db, ticks: this.ticks, logger: logger.child({ component: 'schedule-reconciler' }) },
      config.SCHEDULE_RECONCILE_INTERVAL_MS,
    );
  }

  async start(): Promise<void> {
    await this.reconciler.start();
    this.worker.start();
  }

  /** Intake first (the worker drains its ticks in flight), then the reconciler, then the queue's connection. */
  async stop(): Promise<void> {
    await this.worker.stop();
    await this.reconciler.stop();
    await this.ticks.close();
  }
}
