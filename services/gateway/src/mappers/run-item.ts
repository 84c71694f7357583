import type { Run__Output } from '@conveyor/proto';

const orUndefined = (s: string | undefined | null): string | undefined => (s ? s : undefined);

function principal(p: Run__Output['creator']) {
  if (!p?.uid) return undefined;
  return {
    uid: p.uid,
    type: p.type === 'AGENT' ? 'service_account' : 'user',
    display_name: orUndefined(p.display_name),
    email: orUndefined(p.email),
  };
}

/** `owner/repo:path/SKILL.md` → `{ name, full_path }` (contract §2.2: the SKILL.md path of the run's skill). */
function agentSkill(spec: string, config: Record<string, unknown>) {
  if (!spec) return undefined;
  const separator = spec.indexOf(':');
  const fullPath = separator >= 0 ? spec.slice(separator + 1) : spec;
  return { name: typeof config.name === 'string' ? config.name : undefined, full_path: fullPath };
}

/** gRPC Run → the contract's RunItem (§2.2); absent optional keys are omitted rather than sent empty. */
export function toRunItem(run: Run__Output): Record<string, unknown> {
  const config = JSON.parse(run.config_json || '{}') as Record<string, unknown>;
  const status = run.status_message;
  return {
    run_id: run.run_id,
    task_id: run.run_id,
    title: run.title,
    prompt: run.prompt,
    state: run.state,
    created_at: run.created_at,
    updated_at: run.updated_at,
    started_at: run.started_at || null,
    agent_config: config,
    agent_skill: agentSkill(run.skill_spec, config),
    artifacts: run.artifacts.map((a) => ({ artifact_type: a.artifact_type, created_at: a.created_at, data: JSON.parse(a.data_json || '{}') as unknown })),
    conversation_id: orUndefined(run.conversation_id),
    session_id: orUndefined(run.session_id),
    creator: principal(run.creator),
    executor: principal(run.executor),
    execution_location: orUndefined(run.execution_location),
    source: orUndefined(run.source),
    is_run_type_cancellable: run.is_run_type_cancellable,
    is_sandbox_running: run.is_sandbox_running,
    metadata: run.metadata,
    parent_run_id: orUndefined(run.parent_run_id),
    schedule: run.schedule?.schedule_id ? run.schedule : undefined,
    scope: { type: 'Team', uid: run.team_id },
    status_message: status?.message
      ? {
          message: status.message,
          error_code: orUndefined(status.error_code),
          retryable: status.retryable ?? undefined,
          session_debug_until: orUndefined(status.session_debug_until),
        }
      : undefined,
  };
}
