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

/** Milliseconds → ISO 8601 duration (`PT2M30S`, `PT1H0M0.25S`), the contract's `run_time` format. */
export function isoDuration(ms: number): string {
  const totalSeconds = Math.max(0, ms) / 1000;
  const hours = Math.floor(totalSeconds / 3600);
  const minutes = Math.floor((totalSeconds % 3600) / 60);
  const seconds = Math.round((totalSeconds % 60) * 1000) / 1000;
  return `PT${hours ? `${hours}H` : ''}${hours || minutes ? `${minutes}M` : ''}${seconds}S`;
}

/** Total runtime once the run has started and ended (an unfinished run has no total yet). */
function runTime(run: Run__Output): string | undefined {
  if (!run.started_at || !run.ended_at) return undefined;
  return isoDuration(Date.parse(run.ended_at) - Date.parse(run.started_at));
}

function requestUsage(usage: Run__Output['request_usage']) {
  if (!usage) return undefined;
  const inference = usage.inference_cost_usd ?? undefined;
  return {
    total_tokens: Number(usage.total_tokens),
    ...(inference === undefined ? {} : { inference_cost_usd: inference }),
    usage_by_category: {
      input_tokens: Number(usage.input_tokens),
      output_tokens: Number(usage.output_tokens),
    },
  };
}

/**
 * gRPC Run → the contract's RunItem (§2.2); absent optional keys are omitted rather than sent empty. `publicUrl` is
 * the gateway's public base: `session_link` is the web console's page of the run there.
 */
export function toRunItem(run: Run__Output, publicUrl: string): Record<string, unknown> {
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
    artifacts: run.artifacts.map((a) => ({
      artifact_type: a.artifact_type,
      created_at: a.created_at,
      data: JSON.parse(a.data_json || '{}') as unknown,
    })),
    conversation_id: orUndefined(run.conversation_id),
    session_id: orUndefined(run.session_id),
    session_link: `${publicUrl}/console/runs/${encodeURIComponent(run.run_id)}`,
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
    run_time: runTime(run),
    trigger_url: run.schedule?.schedule_id
      ? `${publicUrl}/v1/agent/schedules/${encodeURIComponent(run.schedule.schedule_id)}`
      : undefined,
    request_usage: requestUsage(run.request_usage),
  };
}
