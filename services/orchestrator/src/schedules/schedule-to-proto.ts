import type { Run as RunRow, Schedule as ScheduleRow } from '@conveyor/db';
import type { Schedule, ScheduleRunSummary } from '@conveyor/proto';
import { nextTickAfter } from './cron-schedule';

const iso = (d: Date | null | undefined): string => (d ? d.toISOString() : '');

/** The next tick BullMQ fires for this expression, computed by the same strategy; none while paused. */
export function nextRunOf(row: Pick<ScheduleRow, 'enabled' | 'cron' | 'timezone'>, nowMs: number): string {
  if (!row.enabled) return '';
  try {
    return iso(nextTickAfter(row.cron, row.timezone, nowMs));
  } catch {
    return '';
  }
}

export function scheduleToProto(
  row: ScheduleRow,
  options: {
    nowMs: number;
    recentRuns?: Array<Pick<RunRow, 'id' | 'state' | 'title' | 'createdAt' | 'updatedAt'>>;
  },
): Schedule {
  const recent: ScheduleRunSummary[] = (options.recentRuns ?? []).map((r) => ({
    run_id: r.id,
    state: r.state,
    title: r.title,
    created_at: iso(r.createdAt),
    updated_at: iso(r.updatedAt),
  }));
  return {
    id: row.id,
    team_id: row.teamId,
    name: row.name,
    cron_schedule: row.cron,
    timezone: row.timezone,
    enabled: row.enabled,
    prompt: row.prompt,
    mode: row.mode,
    config_json: JSON.stringify(row.agentConfig ?? {}),
    agent_uid: row.agentUid ?? '',
    metadata: (row.metadata ?? {}) as Record<string, string>,
    created_by: { type: row.createdByType, uid: row.createdById },
    updated_by: { type: row.updatedByType, uid: row.updatedById },
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
    last_ran: iso(row.lastRanAt),
    next_run: nextRunOf(row, options.nowMs),
    last_spawn_error: row.lastSpawnError ?? '',
    recent_runs: recent,
  };
}
