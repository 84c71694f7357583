import { integrationRunFields } from './integration-run-fields';
import { z } from './zod';

/** Integrations (docs/integrations.md): requests and responses. */

export const createGitHubAppBody = z
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
  .strict()
  .openapi('CreateGitHubAppBody');

export const githubAppSchema = z
  .object({
    github_app_id: z.string(),
    name: z.string(),
    app_id: z.string(),
    slug: z.string(),
    bot_login: z.string().describe('`<slug>[bot]`: assigning an issue to it starts a run'),
    webhook_uid: z.string(),
    webhook_url: z.string().describe("Set this as the App's webhook URL in GitHub"),
    environment_id: z.string().nullable(),
    trigger_label: z.string().nullable(),
    repositories: z.array(z.string()),
    allowed_users: z.array(z.string()),
    status: z.enum(['active', 'broken']),
    broken_reason: z.string().nullable().describe("GitHub's answer when it refused the App's credentials"),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi('GitHubApp');
export const githubAppListResponseSchema = z
  .object({ github_apps: z.array(githubAppSchema) })
  .openapi('GitHubAppListResponse');
