import { githubAppBody } from '@conveyor/integration-bodies';
import { z } from './zod';

/** Integrations (docs/integrations.md): requests and responses. */

export const createGitHubAppBody = githubAppBody.openapi('CreateGitHubAppBody');

export const startGitHubAppManifestBody = githubAppBody
  .omit({ app_id: true, private_key: true, webhook_secret: true })
  .extend({
    organization: z
      .string()
      .min(1)
      .max(39)
      .optional()
      .describe('The GitHub organization that will own the App (default: the user who creates it on GitHub)'),
  })
  .strict()
  .openapi('StartGitHubAppManifestBody');

export const githubAppManifestSchema = z
  .object({
    post_url: z.string().describe('Where the browser POSTs a form whose field `manifest` is `manifest`'),
    manifest: z
      .record(z.unknown())
      .describe(
        "GitHub's App manifest: name, url, hook_attributes.url (the App's webhook), redirect_url, permissions, events",
      ),
    state: z.string().describe('Single use, for 10 minutes; already in post_url'),
    expires_at: z.string(),
    webhook_url: z.string().describe("The App's webhook URL, named in the manifest"),
  })
  .openapi('GitHubAppManifest');

export const githubAppManifestCallbackQuery = z.object({
  code: z.string().min(1).max(128).describe("GitHub's single-use code"),
  state: z.string().min(1).max(100).describe('The state of POST /integrations/github-apps/manifest'),
});

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
