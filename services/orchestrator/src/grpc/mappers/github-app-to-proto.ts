import type { GitHubApp } from '@conveyor/proto';
import type { GitHubAppView } from '../../integrations/github-apps';
import { iso } from './iso';

/** Everything about a registered App but its private key and webhook secret, which are never returned. */
export const githubAppToProto = ({ row, webhookUrl }: GitHubAppView): GitHubApp => ({
  id: row.id,
  name: row.name,
  app_id: row.appId,
  slug: row.slug,
  bot_login: row.botLogin,
  webhook_uid: row.webhookId,
  webhook_url: webhookUrl,
  environment_id: row.environmentId ?? '',
  trigger_label: row.triggerLabel ?? '',
  repositories: row.repositories,
  allowed_users: row.allowedUsers,
  status: row.status,
  broken_reason: row.brokenReason ?? '',
  created_at: iso(row.createdAt),
  updated_at: iso(row.updatedAt),
});
