import { z } from 'zod';
import { integrationRunFields } from './integration-run-fields';

/** Linear integrations (docs/integrations.md "Linear"): requests and responses. */

const linearId = z.string().min(1).max(64);

export const createLinearIntegrationBody = z
  .object({
    name: z.string().min(1).max(64).describe('`[A-Za-z0-9][A-Za-z0-9_.-]{0,63}`, unique in the team'),
    factory_id: z.string().min(1).describe("The factory whose webhook receives Linear's deliveries"),
    api_key: z
      .string()
      .min(8)
      .max(512)
      .describe(
        "A Linear personal API key (`lin_api_…`) or OAuth access token (`lin_oauth_…`) of the agent's user; checked with `viewer`, stored encrypted, never returned",
      ),
    webhook_secret: z
      .string()
      .min(16)
      .max(256)
      .describe('The signing secret Linear shows for the webhook; stored as a team secret, never returned'),
    agent_user_id: linearId
      .optional()
      .describe("The Linear user whose assignment starts a run (default: the key's own user)"),
    ...integrationRunFields('an issue gets it'),
    team_repositories: z
      .record(z.string().min(1).max(64), z.string().url().max(500))
      .optional()
      .describe('Linear team ID or key (`ENG`) → the repository URL its issues are about'),
    pr_opened_state_id: linearId
      .optional()
      .describe('The workflow state the issue moves to when the run opens a pull request'),
    run_ended_state_id: linearId
      .optional()
      .describe('The workflow state the issue moves to when the run ends'),
  })
  .strict();

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
