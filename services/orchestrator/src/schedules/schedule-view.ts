import type { Run, Schedule } from '@conveyor/db';
import { nextTickAfter } from './cron-schedule';

export type ScheduleRunSummary = Pick<Run, 'id' | 'state' | 'title' | 'createdAt' | 'updatedAt'>;

/** A schedule as the domain shows it: its row, when it fires next, and (in its details) its latest runs. */
export interface ScheduleView {
  schedule: Schedule;
  nextRun: Date | null;
  recentRuns: ScheduleRunSummary[];
}

/** The next tick BullMQ fires for this expression, computed by the same strategy; none while paused. */
export function nextRunOf(row: Pick<Schedule, 'enabled' | 'cron' | 'timezone'>, nowMs: number): Date | null {
  if (!row.enabled) return null;
  try {
    return nextTickAfter(row.cron, row.timezone, nowMs);
  } catch {
    return null;
  }
}

export function scheduleView(
  schedule: Schedule,
  nowMs: number,
  recentRuns: ScheduleRunSummary[] = [],
): ScheduleView {
  return { schedule, nextRun: nextRunOf(schedule, nowMs), recentRuns };
}
