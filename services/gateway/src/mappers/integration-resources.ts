import type { GitHubApp__Output } from '@conveyor/proto';

const orNull = (s: string): string | null => s || null;

export const toGitHubAppJson = (a: GitHubApp__Output): Record<string, unknown> => ({
  github_app_id: a.id,
  name: a.name,
  app_id: a.app_id,
  slug: a.slug,
  bot_login: a.bot_login,
  webhook_uid: a.webhook_uid,
  webhook_url: a.webhook_url,
  environment_id: orNull(a.environment_id),
  trigger_label: orNull(a.trigger_label),
  repositories: a.repositories,
  allowed_users: a.allowed_users,
  status: a.status,
  broken_reason: orNull(a.broken_reason),
  created_at: a.created_at,
  updated_at: a.updated_at,
});
