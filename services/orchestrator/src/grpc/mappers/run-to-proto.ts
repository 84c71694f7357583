import type { ListRunsResponse, Run } from '@conveyor/proto';
import type { RunPage, RunView } from '../../runs/run-view';
import { iso } from './iso';

export function runToProto({ run: row, artifacts, usage, sandboxRunning, cancellable }: RunView): Run {
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
      ? {
          schedule_id: row.scheduleId,
          schedule_name: row.scheduleName ?? '',
          cron_schedule: row.scheduleCron ?? '',
        }
      : undefined,
    status_message: row.statusMessage
      ? {
          message: row.statusMessage,
          error_code: row.errorCode ?? '',
          retryable: row.retryable ?? undefined,
          session_debug_until: iso(row.sessionDebugUntil),
        }
      : undefined,
    artifacts: artifacts.map((a) => ({
      artifact_uid: a.id,
      artifact_type: a.type,
      created_at: iso(a.createdAt),
      data_json: JSON.stringify(a.data ?? {}),
    })),
    is_sandbox_running: sandboxRunning,
    is_run_type_cancellable: cancellable,
    request_usage: usage,
  };
}

export function runPageToProto(page: RunPage): ListRunsResponse {
  return {
    runs: page.runs.map(runToProto),
    has_next_page: page.nextCursor !== undefined,
    next_cursor: page.nextCursor ?? '',
  };
}
