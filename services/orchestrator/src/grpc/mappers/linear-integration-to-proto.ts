import type { LinearIntegration } from '@conveyor/proto';
import type { LinearIntegrationView } from '../../integrations/linear/linear-integrations';
import { iso } from './iso';

/** Everything about a Linear integration but its key and webhook secret, which are never returned. */
export const linearIntegrationToProto = ({ row, webhookUrl }: LinearIntegrationView): LinearIntegration => ({
  id: row.id,
  name: row.name,
  agent_user_id: row.agentUserId,
  agent_name: row.agentName,
  webhook_uid: row.webhookId,
  webhook_url: webhookUrl,
  environment_id: row.environmentId ?? '',
  trigger_label: row.triggerLabel ?? '',
  team_repositories: (row.teamRepositories ?? {}) as Record<string, string>,
  pr_opened_state_id: row.prOpenedStateId ?? '',
  run_ended_state_id: row.runEndedStateId ?? '',
  status: row.status,
  broken_reason: row.brokenReason ?? '',
  created_at: iso(row.createdAt),
  updated_at: iso(row.updatedAt),
});
