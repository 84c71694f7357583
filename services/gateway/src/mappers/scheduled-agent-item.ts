import type { Schedule__Output } from '@conveyor/proto';

const orUndefined = (s: string | undefined | null): string | undefined => (s ? s : undefined);

function profile(p: Schedule__Output['created_by']) {
  if (!p?.uid) return undefined;
  return { uid: p.uid, type: p.type === 'AGENT' ? 'service_account' : 'user' };
}

/**
 * gRPC Schedule → the contract's ScheduledAgentItem (§4.1). Beyond the contract (docs/schedules.md): `timezone`,
 * `mode`, and on retrieve `history.recent_runs` (the schedule's latest runs with their states).
 */
export function toScheduledAgentItem(
  s: Schedule__Output,
  options: { withRecentRuns?: boolean } = {},
): Record<string, unknown> {
  return {
    id: s.id,
    name: s.name,
    cron_schedule: s.cron_schedule,
    timezone: s.timezone,
    enabled: s.enabled,
    prompt: s.prompt,
    mode: s.mode,
    created_at: s.created_at,
    updated_at: s.updated_at,
    agent_config: JSON.parse(s.config_json || '{}') as unknown,
    agent_uid: orUndefined(s.agent_uid),
    created_by: profile(s.created_by),
    updated_by: profile(s.updated_by),
    history: {
      last_ran: s.last_ran || null,
      next_run: s.next_run || null,
      ...(options.withRecentRuns
        ? {
            recent_runs: s.recent_runs.map((r) => ({
              run_id: r.run_id,
              state: r.state,
              title: r.title,
              created_at: r.created_at,
              updated_at: r.updated_at,
            })),
          }
        : {}),
    },
    last_spawn_error: s.last_spawn_error || null,
    metadata: s.metadata,
    scope: { type: 'Team', uid: s.team_id },
  };
}
