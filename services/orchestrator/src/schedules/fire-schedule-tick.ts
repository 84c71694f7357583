import { AppError } from '@conveyor/errors';
import type { PrismaClient } from '@conveyor/db';
import type { Caller } from '../auth/caller';
import { createRun, type CreateRunDeps } from '../runs/create-run';
import type { ScheduleTickJob } from './schedule-tick-queue';

export type TickOutcome =
  | { outcome: 'started'; runId: string }
  /** Another replica (or an earlier attempt) already started this tick's run. */
  | { outcome: 'duplicate' }
  /** Deleted between the row's commit and the scheduler's removal. */
  | { outcome: 'deleted' }
  | { outcome: 'paused' }
  /** A tick of an expression the schedule no longer has (updated while the tick was in flight). */
  | { outcome: 'stale' }
  /** The run was refused (e.g. its agent identity was deleted); recorded as the schedule's last_spawn_error. */
  | { outcome: 'spawn_failed'; error: string };

const isUniqueViolation = (err: unknown): boolean => (err as { code?: string } | null)?.code === 'P2002';

/**
 * Starts the one run of a tick. The row is read at tick time, so a paused, deleted or re-timed schedule starts
 * nothing; the firing row (primary key: schedule, tick time) commits with the run, so a tick processed twice
 * (two replicas, a retried attempt, a stalled job) still starts a single run.
 */
export async function fireScheduleTick(
  deps: CreateRunDeps & { db: PrismaClient },
  job: ScheduleTickJob,
  tickAt: Date,
): Promise<TickOutcome> {
  const schedule = await deps.db.schedule.findUnique({ where: { id: job.scheduleId } });
  if (!schedule) return { outcome: 'deleted' };
  if (!schedule.enabled) return { outcome: 'paused' };
  if (schedule.cron !== job.cron || schedule.timezone !== job.timezone) return { outcome: 'stale' };
  if (
    await deps.db.scheduleFiring.findUnique({
      where: { scheduleId_tickAt: { scheduleId: schedule.id, tickAt } },
      select: { runId: true },
    })
  ) {
    return { outcome: 'duplicate' };
  }

  // Runs are started as the schedule's creator, with the team's visibility.
  const caller: Caller = {
    team_id: schedule.teamId,
    principal_type: schedule.createdByType,
    principal_id: schedule.createdById,
    role: 'MEMBER',
    api_key_id: '',
    run_id: '',
    display_name: '',
    email: '',
  };
  try {
    const { runId } = await createRun(
      deps,
      caller,
      {
        prompt: schedule.prompt,
        config: (schedule.agentConfig ?? {}) as Record<string, unknown>,
        mode: schedule.mode,
        metadata: (schedule.metadata ?? {}) as Record<string, string>,
        agentIdentityUid: schedule.agentUid ?? undefined,
        source: 'SCHEDULED_AGENT',
        schedule: { id: schedule.id, name: schedule.name, cron: schedule.cron },
      },
      async (tx, newRunId) => {
        await tx.scheduleFiring.create({ data: { scheduleId: schedule.id, tickAt, runId: newRunId } });
        await tx.schedule.update({
          where: { id: schedule.id },
          data: { lastRanAt: new Date(), lastSpawnError: null },
        });
      },
    );
    return { outcome: 'started', runId };
  } catch (err) {
    if (isUniqueViolation(err)) return { outcome: 'duplicate' };
    if (err instanceof AppError) {
      // A refusal by the domain will not change on retry: record it for the schedule's owner instead.
      await deps.db.schedule.updateMany({
        where: { id: schedule.id },
        data: { lastSpawnError: `${err.code}: ${err.message}` },
      });
      return { outcome: 'spawn_failed', error: err.message };
    }
    throw err;
  }
}
