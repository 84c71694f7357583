import type { Schedule } from '@conveyor/proto';
import type { ScheduleView } from '../../schedules/schedule-view';
import { iso } from './iso';

export function scheduleToProto({ schedule: row, nextRun, recentRuns }: ScheduleView): Schedule {
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
    next_run: iso(nextRun),
    last_spawn_error: row.lastSpawnError ?? '',
    recent_runs: recentRuns.map((r) => ({
      run_id: r.id,
      state: r.state,
      title: r.title,
      created_at: iso(r.createdAt),
      updated_at: iso(r.updatedAt),
    })),
  };
}
