import { z } from './zod';

/** Slack apps (docs/integrations.md "Slack app"): requests and responses. */

const slackId = z.string().regex(/^[A-Z0-9]{2,32}$/);

export const createSlackAppBody = z
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
  .strict()
  .openapi('CreateSlackAppBody');

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
