import type { Artifact as ArtifactRow, Run as RunRow } from '@conveyor/db';
import type { Run } from '@conveyor/proto';
import { isCancellableType } from './cancel-run';
import type { RunUsage } from './run-usage';

const iso = (d: Date | null | undefined): string => (d ? d.toISOString() : '');

export function runToProto(row: RunRow, artifacts: ArtifactRow[] = [], usage?: RunUsage): Run {
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
    is_sandbox_running: row.state === 'INPROGRESS' || row.state === 'CLAIMED',
    is_run_type_cancellable: isCancellableType(row),
    request_usage: usage,
  };
}
