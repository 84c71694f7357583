import { z } from 'zod';
import { linearIntegrationBody } from '@conveyor/integration-bodies';

/** Linear integrations (docs/integrations.md "Linear"): requests and responses. */

export const createLinearIntegrationBody = linearIntegrationBody;

export const linearIntegrationSchema = z.object({
  linear_integration_id: z.string(),
  name: z.string(),
  agent_user_id: z.string().describe('Assigning an issue to this Linear user starts a run'),
  agent_name: z.string().nullable().describe("The user's name, as mentions of it are written"),
  webhook_uid: z.string(),
  webhook_url: z.string().describe("Set this as the webhook's URL in Linear"),
  environment_id: z.string().nullable(),
  trigger_label: z.string().nullable(),
  team_repositories: z.record(z.string(), z.string()),
  pr_opened_state_id: z.string().nullable(),
  run_ended_state_id: z.string().nullable(),
  status: z.enum(['active', 'broken']),
  broken_reason: z.string().nullable().describe("Linear's answer when it refused the key"),
  created_at: z.string(),
  updated_at: z.string(),
});
export const linearIntegrationListResponseSchema = z.object({
  linear_integrations: z.array(linearIntegrationSchema),
});
