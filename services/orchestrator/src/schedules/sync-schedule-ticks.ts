import type { Schedule as ScheduleRow } from '@conveyor/db';
import type { ScheduleTickQueue } from './schedule-tick-queue';

/** Brings the job scheduler in line with the row: running schedules have one, paused ones none. */
export async function syncTicks(
  ticks: ScheduleTickQueue,
  row: Pick<ScheduleRow, 'id' | 'enabled' | 'cron' | 'timezone'>,
): Promise<void> {
  if (row.enabled) await ticks.upsert({ id: row.id, cron: row.cron, timezone: row.timezone });
  else await ticks.remove(row.id);
}
