import { z } from 'zod';

/**
 * The registration bodies of the integrations (docs/integrations.md): the gateway validates API requests with them
 * (naming them in the OpenAPI document), the orchestrator validates `integrations/<name>.yaml` definitions with them.
 */

/**
 * The registration fields of an integration whose deliveries start runs (a GitHub App, a Linear integration): the
 * runs' environment and the label that starts one. `labelStarts` ends the label's description: "A label that starts a
 * run when …".
 */
const integrationRunFields = (labelStarts: string) => ({
  environment_id: z.string().max(100).optional().describe("Runs' environment (default: the team's default)"),
  trigger_label: z
    .string()
    .min(1)
    .max(50)
    .optional()
    .describe(`A label that starts a run when ${labelStarts}`),
});

export const githubAppBody = z
  .object({
    name: z.string().min(1).max(64).describe('`[A-Za-z0-9][A-Za-z0-9_.-]{0,63}`, unique in the team'),
    factory_id: z.string().min(1).describe("The factory whose webhook receives the App's deliveries"),
    app_id: z.string().min(1).max(20).describe("The App ID GitHub shows on the App's settings page"),
    private_key: z
      .string()
      .min(1)
      .max(16_384)
      .describe('The PEM private key GitHub generated for the App; stored encrypted, never returned'),
    webhook_secret: z
      .string()
      .min(16)
      .max(256)
      .describe("The App's webhook secret; stored as a team secret, never returned"),
    ...integrationRunFields('added to an issue'),
    repositories: z
      .array(z.string().min(3).max(200))
      .max(100)
      .optional()
      .describe('`owner/repo` the App acts on (default: every repository of its installations)'),
    allowed_users: z
      .array(z.string().min(1).max(50))
      .max(200)
      .optional()
      .describe(
        "GitHub logins who may trigger it (default: the repository's owners, members and collaborators)",
      ),
  })
  .strict();
export type GitHubAppBody = z.infer<typeof githubAppBody>;

const slackId = z.string().regex(/^[A-Z0-9]{2,32}$/);

export const slackAppBody = z
  .object({
    name: z.string().min(1).max(64).describe('`[A-Za-z0-9][A-Za-z0-9_.-]{0,63}`, unique in the team'),
    factory_id: z.string().min(1).describe("The factory whose webhook receives the app's deliveries"),
    signing_secret: z
      .string()
      .min(16)
      .max(256)
      .describe("The app's Signing Secret (Basic Information); stored as a team secret, never returned"),
    bot_token: z
      .string()
      .regex(/^xoxb-[A-Za-z0-9-]{1,250}$/)
      .describe(
        "The app's Bot User OAuth Token (`xoxb-…`), checked with auth.test; stored encrypted, never returned",
      ),
    environment_id: z
      .string()
      .max(100)
      .optional()
      .describe(
        "Runs' environment unless a request names one with `env:<name>` (default: the team's default)",
      ),
    allowed_channels: z
      .array(slackId)
      .max(200)
      .optional()
      .describe('Slack channel IDs where the app may be asked (default: every channel it is in)'),
    allowed_users: z
      .array(slackId)
      .max(500)
      .optional()
      .describe('Slack user IDs who may ask it (default: everyone in the workspace)'),
  })
  .strict();
export type SlackAppBody = z.infer<typeof slackAppBody>;

const linearId = z.string().min(1).max(64);

export const linearIntegrationBody = z
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
export type LinearIntegrationBody = z.infer<typeof linearIntegrationBody>;
