import type { SlackApp } from '@conveyor/proto';
import type { SlackAppView } from '../../integrations/slack/slack-apps';
import { iso } from './iso';

/** Everything about a registered Slack app but its signing secret and bot token, which are never returned. */
export const slackAppToProto = ({ row, webhookUrl }: SlackAppView): SlackApp => ({
  id: row.id,
  name: row.name,
  slack_team_id: row.slackTeamId,
  bot_user_id: row.botUserId,
  webhook_uid: row.webhookId,
  webhook_url: webhookUrl,
  environment_id: row.environmentId ?? '',
  allowed_channels: row.allowedChannels,
  allowed_users: row.allowedUsers,
  status: row.status,
  broken_reason: row.brokenReason ?? '',
  created_at: iso(row.createdAt),
  updated_at: iso(row.updatedAt),
});
