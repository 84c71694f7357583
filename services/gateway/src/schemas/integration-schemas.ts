import { githubAppBody } from '@conveyor/integration-bodies';
import { z } from './zod';

/** Integrations (docs/integrations.md): requests and responses. */

export const createGitHubAppBody = githubAppBody.openapi('CreateGitHubAppBody');

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
