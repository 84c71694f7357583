import type { SlackApp, Webhook } from '@conveyor/db';
import { verifyBotToken } from '../../integrations/slack/slack-api';
import { validateSlackApp, type CreateSlackAppInput } from '../../integrations/slack/slack-apps';
import { slackAppTokenContext } from '../../secrets/secret-cipher';
import type { IntegrationAdapter } from './integration-adapter';

type Input = CreateSlackAppInput;

/** `slack`: the bot token is checked with Slack (auth.test), which tells the workspace and the bot's user. */
export const slackAppAdapter: IntegrationAdapter<
  Input,
  SlackApp & { webhook: Webhook },
  { teamId: string; userId: string },
  {
    slackTeamId: string;
    botUserId: string;
    environmentId: string | null;
    allowedChannels: string[];
    allowedUsers: string[];
  },
  { botTokenCiphertext: Uint8Array<ArrayBuffer>; botTokenKeyId: string }
> = {
  label: 'Slack app',
  idPrefix: 'sla',
  credential: 'bot_token',
  webhook: { prefix: 'slack-app', scheme: 'slack', secretField: 'signing_secret' },
  parse(_ctx, body) {
    const input: Input = {
      name: body.name,
      factory_id: body.factory_id,
      bot_token: body.bot_token as string,
      signing_secret: body.signing_secret as string,
      environment_id: (body.environment_id as string | undefined) ?? '',
      allowed_channels: (body.allowed_channels as string[] | undefined) ?? [],
      allowed_users: (body.allowed_users as string[] | undefined) ?? [],
    };
    validateSlackApp(input);
    return input;
  },
  find: (tx, teamId, name) =>
    tx.slackApp.findUnique({ where: { teamId_name: { teamId, name } }, include: { webhook: true } }),
  count: (tx, teamId) => tx.slackApp.count({ where: { teamId } }),
  storedCredential: (cipher, row) =>
    cipher.decrypt(row.botTokenCiphertext, row.botTokenKeyId, slackAppTokenContext(row.id)),
  encrypt(cipher, id, token) {
    const { ciphertext, keyId } = cipher.encrypt(token, slackAppTokenContext(id));
    return { botTokenCiphertext: new Uint8Array(ciphertext), botTokenKeyId: keyId };
  },
  verify: (ctx, input) => verifyBotToken(ctx.providers.slack, input.bot_token),
  known: (row) => ({ teamId: row.slackTeamId, userId: row.botUserId }),
  fields: (input, bot) => ({
    slackTeamId: bot.teamId,
    botUserId: bot.userId,
    environmentId: input.environment_id || null,
    allowedChannels: input.allowed_channels,
    allowedUsers: input.allowed_users,
  }),
  compare: (row, fields) => ({
    environment_id: [row.environmentId, fields.environmentId],
    allowed_channels: [row.allowedChannels, fields.allowedChannels],
    allowed_users: [row.allowedUsers, fields.allowedUsers],
  }),
  create: (tx, data) => tx.slackApp.create({ data }),
  update: (tx, id, data) => tx.slackApp.update({ where: { id }, data }),
};
