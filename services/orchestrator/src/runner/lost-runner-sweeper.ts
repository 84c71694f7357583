import type { PrismaClient } from '@conveyor/db';
import { outageOf } from '@conveyor/errors';
import type { Logger } from '@conveyor/logger';
import type { Counter } from '@conveyor/metrics';
import { BackgroundLoop } from '@conveyor/runtime';
import { currentTraceCarrier } from '@conveyor/tracing';
import { inRunTrace } from '../runs/in-run-trace';
import { ENQUEUE_RUN } from '../runs/outbox-relay';
import { transitionRun } from '../runs/run-state-machine';
import { recordUndeliveredFollowups } from '../runs/undelivered-followups';

export const MAX_CLAIM_ATTEMPTS = 3;

/**
 * Runs whose runner stopped heartbeating are never left INPROGRESS: before the harness started (CLAIMED, PENDING)
 * the run is queued again as a new execution, up to MAX_CLAIM_ATTEMPTS; after that, or once the harness was
 * running (its side effects cannot be assumed undone), the run ends in ERROR with `resource_unavailable`, and the
 * follow-ups its harness never took are recorded as not delivered (undelivered-followups.ts).
 *
 * Silence counts only while a heartbeat could have landed: the sweeper judges nothing until it has reached
 * PostgreSQL without a break for `lostAfterMs` (after its start, and again after any pass that failed), so a runner
 * alive and retrying through this orchestrator's restart or a database outage is not taken for lost
 * (docs/run-lifecycle.md "Lost runners").
 */
export class LostRunnerSweeper {
  private sweeping: Promise<number> | undefined;
  /** The first pass that reached PostgreSQL since the sweeper started or a pass failed (epoch ms). */
  private watchingSince: number | undefined;
  /** PostgreSQL only: the runs and their outbox entries; the relay takes the entries to Redis. */
  readonly loop: BackgroundLoop;

  constructor(
    private readonly deps: {
      db: PrismaClient;
      kickOutbox: () => void;
      logger: Logger;
      /** conveyor_runners_lost_total, by what became of the run. */
      lost?: Counter<'outcome'>;
    },
    private readonly lostAfterMs: number,
    intervalMs = 5000,
  ) {
    this.loop = new BackgroundLoop({
      name: 'lost-runner sweep',
      dependency: 'postgres',
      intervalMs,
      run: () => this.sweep(),
      logger: deps.logger,
    });
  }

  start(): void {
    this.loop.start();
  }

  sweep(now = new Date()): Promise<number> {
    this.sweeping ??= this.sweepOnce(now).finally(() => (this.sweeping = undefined));
    return this.sweeping;
  }

  private async sweepOnce(now: Date): Promise<number> {
    try {
      return await this.judge(now);
    } catch (err) {
      this.watchingSince = undefined;
      throw err;
    }
  }

  private async judge(now: Date): Promise<number> {
    const { db, logger } = this.deps;
    const cutoff = new Date(now.getTime() - this.lostAfterMs);
    const stale = await db.run.findMany({
      where: {
        OR: [
          { state: { in: ['CLAIMED', 'PENDING', 'INPROGRESS'] }, lastHeartbeatAt: { lt: cutoff } },
          { debugExecution: { not: null }, runnerId: { not: null }, lastHeartbeatAt: { lt: cutoff } },
          { state: 'CANCELLED', runnerId: { not: null }, lastHeartbeatAt: { lt: cutoff } },
        ],
      },
      take: 100,
    });
    this.watchingSince ??= now.getTime();
    if (now.getTime() - this.watchingSince < this.lostAfterMs) return 0;
    let handled = 0;
    // Still silent when it is moved: a heartbeat that lands between the read above and the move (a restarted runner
    // taking its runs back just past the threshold, on a slow host) keeps the run its runner's.
    const stillSilent = { lastHeartbeatAt: { lt: cutoff } };
    for (const run of stale) {
      try {
        const outcome = await inRunTrace('runner lost', run, () =>
          db.$transaction(async (tx): Promise<'requeued' | 'errored' | 'released' | undefined> => {
            // Cancelled while it ran, and its runner went silent before completing: the ended run lets go of it.
            if (run.state === 'CANCELLED') {
              const { count } = await tx.run.updateMany({
                where: { ...stillSilent, id: run.id, state: 'CANCELLED', runnerId: run.runnerId },
                data: { runnerId: null },
              });
              return count > 0 ? 'released' : undefined;
            }
            if (run.debugExecution !== null && run.state === 'FAILED') {
              const { count } = await tx.run.updateMany({
                where: { ...stillSilent, id: run.id, runnerId: run.runnerId },
                data: { debugExecution: null, runnerId: null },
              });
              return count > 0 ? 'errored' : undefined;
            }
            if (run.state !== 'INPROGRESS' && run.claimAttempts < MAX_CLAIM_ATTEMPTS) {
              const execution = run.execution + 1;
              // The new execution continues the run's trace from this span, by the queue or a worker's dispatch.
              const trace = currentTraceCarrier();
              const moved = await transitionRun(tx, run, run.state, 'QUEUED', {
                now,
                onlyIf: stillSilent,
                message: 'The runner stopped responding before the agent started; queued again',
                extra: {
                  execution,
                  runnerId: null,
                  lastHeartbeatAt: null,
                  ...(trace && { traceContext: trace }),
                },
              });
              if (!moved) return undefined;
              // Follow-ups the lost claim took but no runner acknowledged go to the next claim, in their order.
              await tx.runFollowup.updateMany({
                where: { runId: run.id, execution: run.execution, deliveredAt: null },
                data: { execution },
              });
              await tx.outboxEntry.create({
                data: { kind: ENQUEUE_RUN, payload: { runId: run.id, execution, trace } },
              });
              return 'requeued';
            }
            const ended = await transitionRun(tx, run, run.state, 'ERROR', {
              now,
              onlyIf: stillSilent,
              message: 'The runner executing this run stopped responding',
              errorCode: 'resource_unavailable',
              retryable: true,
              extra: { runnerId: null },
            });
            if (!ended) return undefined;
            await recordUndeliveredFollowups(tx, run, 'runner_lost', now);
            return 'errored';
          }),
        );
        // Moved meanwhile by its runner (a heartbeat, its completion) or a cancel: not lost.
        if (!outcome) continue;
        handled++;
        // A cancelled run's runner is released, not counted lost: the run's outcome did not depend on it.
        if (outcome !== 'released') this.deps.lost?.inc({ outcome });
        logger.warn(
          { runId: run.id, runnerId: run.runnerId, requeued: outcome === 'requeued' },
          'runner lost',
        );
      } catch (err) {
        // The database went away mid-pass: the pass fails, and silence is judged afresh once it is back.
        if (outageOf(err)) throw err;
        logger.warn({ err, runId: run.id }, 'lost-runner sweep failed for run');
      }
    }
    if (handled > 0) this.deps.kickOutbox();
    return handled;
  }

  async stop(): Promise<void> {
    await this.loop.stop();
    await this.sweeping;
  }
}
