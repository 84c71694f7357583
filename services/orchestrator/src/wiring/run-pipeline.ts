import type { Redis } from 'ioredis';
import type { PrismaClient } from '@conveyor/db';
import type { Logger } from '@conveyor/logger';
import {
  createRunnersLostCounter,
  createRunQueueDepthGauge,
  createRunQueueOldestWaitingGauge,
  type Registry,
} from '@conveyor/metrics';
import { loopPart, type ServiceParts } from '@conveyor/runtime';
import type { OrchestratorConfig } from '../config';
import { LostRunnerSweeper } from '../runner/lost-runner-sweeper';
import { OutboxRelay } from '../runs/outbox-relay';
import { RunQueue } from '../runs/run-queue';
import { RunQueueReconciler } from '../runs/run-queue-reconciler';

/** What every wiring step is given: settings, logs, metrics, the parts list and the two stores. */
export interface WiringDeps {
  config: OrchestratorConfig;
  logger: Logger;
  metrics: Registry;
  parts: ServiceParts;
  db: PrismaClient;
  redis: Redis;
}

/**
 * From a run written to a queued job: the queue, the outbox relay that fills it, the sweep that requeues the runs of
 * lost runners and the reconciliation that finds runs without a job.
 */
export async function startRunPipeline({ config, logger, metrics, parts, db, redis }: WiringDeps) {
  const runQueue = new RunQueue(redis, config.RUN_QUEUE);
  await parts.add({ name: 'run queue', stop: () => runQueue.close() });
  createRunQueueDepthGauge(metrics, () => runQueue.queue.getJobCounts('waiting', 'active', 'delayed'));
  createRunQueueOldestWaitingGauge(metrics, () => runQueue.oldestWaitingAt());

  const outbox = new OutboxRelay(db, runQueue, logger.child({ component: 'outbox' }));
  await parts.add(loopPart('outbox relay', outbox));
  const kickOutbox = () => void outbox.kick();

  const sweeper = new LostRunnerSweeper(
    {
      db,
      kickOutbox,
      logger: logger.child({ component: 'lost-runner-sweeper' }),
      lost: createRunnersLostCounter(metrics),
    },
    config.RUNNER_LOST_AFTER_MS,
  );
  await parts.add(loopPart('lost-runner sweep', sweeper));

  const reconciler = new RunQueueReconciler(
    { db, queue: runQueue, logger: logger.child({ component: 'run-queue-reconciler' }) },
    config.RUN_QUEUE_RECONCILE_INTERVAL_MS,
  );
  await parts.add(loopPart('run queue reconciliation', reconciler));
  // A Redis that comes back may have come back empty: look for runs without a job at once.
  redis.on('ready', () => void reconciler.loop.trigger());

  return { runQueue, kickOutbox };
}
