import type { LinearIntegration__Output } from '@conveyor/proto';

const orNull = (s: string): string | null => s || null;

export const toLinearIntegrationJson = (l: LinearIntegration__Output): Record<string, unknown> => ({
  linear_integration_id: l.id,
  name: l.name,
  agent_user_id: l.agent_user_id,
  agent_name: orNull(l.agent_name),
  webhook_uid: l.webhook_uid,
  webhook_url: l.webhook_url,
  environment_id: orNull(l.environment_id),
  trigger_label: orNull(l.trigger_label),
  team_repositories: l.team_repositories,
  pr_opened_state_id: orNull(l.pr_opened_state_id),
  run_ended_state_id: orNull(l.run_ended_state_id),
  status: l.status,
  broken_reason: orNull(l.broken_reason),
  created_at: l.created_at,
  updated_at: l.updated_at,
});
