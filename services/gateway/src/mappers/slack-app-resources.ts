import type { SlackApp__Output } from '@conveyor/proto';

const orNull = (s: string): string | null => s || null;

export const toSlackAppJson = (a: SlackApp__Output): Record<string, unknown> => ({
  slack_app_id: a.id,
  name: a.name,
  slack_team_id: a.slack_team_id,
  bot_user_id: a.bot_user_id,
  webhook_uid: a.webhook_uid,
  webhook_url: a.webhook_url,
  environment_id: orNull(a.environment_id),
  allowed_channels: a.allowed_channels,
  allowed_users: a.allowed_users,
  status: a.status,
  broken_reason: orNull(a.broken_reason),
  created_at: a.created_at,
  updated_at: a.updated_at,
});
