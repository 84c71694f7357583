import type { Run as RunRow } from '@conveyor/db';
import type { Run } from '@conveyor/proto';

const iso = (d: Date | null | undefined): string => (d ? d.toISOString() : '');

/** Run types the platform cannot stop from here (contract §2.10). */
const NON_CANCELLABLE_SOURCES = new Set(['GITHUB_ACTION', 'LOCAL']);

export function runToProto(row: RunRow): Run {
  return {
    run_id: row.id,
    team_id: row.teamId,
    title: row.title,
    prompt: row.prompt,
    state: row.state,
    mode: row.mode,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
    started_at: iso(row.startedAt),
    ended_at: iso(row.endedAt),
    config_json: JSON.stringify(row.config ?? {}),
    metadata: (row.metadata ?? {}) as Record<string, string>,
    source: row.source,
    execution_location: row.executionLocation,
    creator: { type: row.creatorType, uid: row.creatorId },
    executor: { type: row.executorType, uid: row.executorId },
    conversation_id: row.conversationId,
    session_id: row.sessionId,
    parent_run_id: row.parentRunId ?? '',
    skill_spec: row.skillSpec ?? '',
    schedule: row.scheduleId
      ? { schedule_id: row.scheduleId, schedule_name: row.scheduleName ?? '', cron_schedule: row.scheduleCron ?? '' }
      : undefined,
    status_message: row.statusMessage
      ? {
          message: row.statusMessage,
          error_code: row.errorCode ?? '',
          retryable: row.retryable ?? undefined,
          session_debug_until: iso(row.sessionDebugUntil),
        }
      : undefined,
    artifacts: [],
    is_sandbox_running: row.state === 'INPROGRESS' || row.state === 'CLAIMED',
    is_run_type_cancellable: !NON_CANCELLABLE_SOURCES.has(row.source) && row.executionLocation !== 'LOCAL',
  };
}
