import type { PrismaClient } from '@conveyor/db';
import { runJobId } from '@conveyor/run-events';
import type { RunQueue } from './run-queue';

export interface RunCapacityDeps {
  db: PrismaClient;
  queue: RunQueue;
  /** A self-hosted worker not heard from for this long has no capacity (WORKER_STALE_AFTER_MS). */
  workerStaleAfterMs: number;
}

/**
 * `at_capacity` of a new run (contract §2.4): would it wait for a free slot where it is going to execute?
 * - On a self-hosted worker (`worker_host`): the team's live connections of that worker ID have no free slot left
 *   (capacity minus active runs, minus runs already queued for it), or none is connected.
 * - On hosted runners: no runner is connected to the run queue, or jobs are already waiting in it. Runners pull
 *   jobs as soon as one of their slots frees up, so a waiting job means every slot is busy.
 * Measured right after the new run was created, leaving the new run itself out; docs/api-surface.md.
 */
export async function isAtCapacity(
  deps: RunCapacityDeps,
  run: { id: string; teamId: string; workerHost: string | null },
): Promise<boolean> {
  const { teamId, workerHost } = run;
  if (workerHost) {
    const since = new Date(Date.now() - deps.workerStaleAfterMs);
    const [live, queued] = await Promise.all([
      deps.db.workerConnection.findMany({
        where: { teamId, workerId: workerHost, disconnectedAt: null, lastHeartbeatAt: { gt: since } },
        select: { capacity: true, activeRuns: true },
      }),
      deps.db.run.count({ where: { teamId, workerHost, state: 'QUEUED', id: { not: run.id } } }),
    ]);
    const free = live.reduce((sum, c) => sum + Math.max(0, c.capacity - c.activeRuns), 0);
    return free <= queued;
  }
  const [runners, waiting, own] = await Promise.all([
    deps.queue.connectedRunners(),
    deps.queue.queue.getWaitingCount(),
    deps.queue.queue.getJobState(runJobId({ runId: run.id, execution: 1 })),
  ]);
  return runners === 0 || waiting - (own === 'waiting' ? 1 : 0) > 0;
}
