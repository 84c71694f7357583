import { slackAppBody } from '@conveyor/integration-bodies';
import { z } from './zod';

/** Slack apps (docs/integrations.md "Slack app"): requests and responses. */

export const createSlackAppBody = slackAppBody.openapi('CreateSlackAppBody');

export const slackAppSchema = z
  .object({
    slack_app_id: z.string(),
    name: z.string(),
    slack_team_id: z.string().describe('The workspace auth.test named for the bot token'),
    bot_user_id: z.string().describe("The bot's user: mentioning it starts a run"),
    webhook_uid: z.string(),
    webhook_url: z
      .string()
      .describe("Set this as the app's Event Subscriptions Request URL and the slash command's Request URL"),
    environment_id: z.string().nullable(),
    allowed_channels: z.array(z.string()),
    allowed_users: z.array(z.string()),
    status: z.enum(['active', 'broken']),
    broken_reason: z.string().nullable().describe("Slack's answer when it refused the bot token"),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi('SlackApp');
export const slackAppListResponseSchema = z
  .object({ slack_apps: z.array(slackAppSchema) })
  .openapi('SlackAppListResponse');
