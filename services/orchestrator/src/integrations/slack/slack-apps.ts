import { AppError, notFound } from '@conveyor/errors';
import { newId, type PrismaClient, type SlackApp } from '@conveyor/db';
import type { Caller } from '../../auth/caller';
import { requireFactoryManager } from '../../factories/permissions';
import { slackAppTokenContext, type SecretCipher } from '../../secrets/secret-cipher';
import type { WebhookDeps } from '../../webhooks/manage-webhooks';
import { ingressUrl } from '../../webhooks/webhook-rules';
import { createWithWebhook, removeIntegrationWebhook } from '../integration-webhook';
import { verifyBotToken, type SlackApiConfig } from './slack-api';

export interface SlackAppDeps extends WebhookDeps {
  slack: SlackApiConfig;
}

export interface CreateSlackAppInput {
  name: string;
  factory_id: string;
  signing_secret: string;
  bot_token: string;
  environment_id: string;
  allowed_channels: string[];
  allowed_users: string[];
}

export interface SlackAppView {
  row: SlackApp;
  webhookUrl: string;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
/** Slack's IDs: channels C…/G…/D…, users U…/W…. */
const SLACK_ID = /^[A-Z0-9]{2,32}$/;
/** Apps per team: each is one webhook of a factory (which holds at most 20). */
const MAX_APPS_PER_TEAM = 10;

export function validateSlackApp(input: CreateSlackAppInput): void {
  const bad = (message: string) => new AppError('invalid_request', message);
  if (!NAME.test(input.name)) throw bad('name must match [A-Za-z0-9][A-Za-z0-9_.-]{0,63}');
  if (input.signing_secret.length < 16 || input.signing_secret.length > 256)
    throw bad("signing_secret must be 16 to 256 characters (the app's Signing Secret in Slack)");
  if (!/^xoxb-[A-Za-z0-9-]{1,250}$/.test(input.bot_token))
    throw bad("bot_token must be the app's Bot User OAuth Token (xoxb-…)");
  const badChannel = input.allowed_channels.find((c) => !SLACK_ID.test(c));
  if (badChannel !== undefined) throw bad(`allowed_channels: "${badChannel}" is not a Slack channel ID`);
  const badUser = input.allowed_users.find((u) => !SLACK_ID.test(u));
  if (badUser !== undefined) throw bad(`allowed_users: "${badUser}" is not a Slack user ID`);
}

export const slackAppView = (webhookBaseUrl: string, row: SlackApp): SlackAppView => ({
  row,
  webhookUrl: ingressUrl(webhookBaseUrl, row.webhookId, 'signature'),
});

/** The app's bot token, decrypted (orchestrator memory only: never in a log, an error, a runner or a sandbox). */
export const botToken = (cipher: SecretCipher, row: SlackApp): string =>
  cipher.decrypt(row.botTokenCiphertext, row.botTokenKeyId, slackAppTokenContext(row.id));

/**
 * Registers a Slack app: the bot token is checked with auth.test first (a token Slack refuses is a 400 with Slack's
 * reason and nothing is stored; the answer names the workspace and the bot user), then its webhook is created in the
 * factory with the signing secret as a slack-signature webhook (a team secret, like any webhook's), then the app with
 * its token encrypted. Neither is ever returned.
 */
export async function createSlackApp(
  deps: SlackAppDeps,
  caller: Caller,
  input: CreateSlackAppInput,
): Promise<SlackAppView> {
  requireFactoryManager(caller, 'Registering a Slack app');
  validateSlackApp(input);
  const taken = `A Slack app named "${input.name}" is already registered`;
  const count = await deps.db.slackApp.count({ where: { teamId: caller.team_id } });
  if (count >= MAX_APPS_PER_TEAM)
    throw new AppError('conflict', `A team may register at most ${MAX_APPS_PER_TEAM} Slack apps`);
  if (
    await deps.db.slackApp.findUnique({
      where: { teamId_name: { teamId: caller.team_id, name: input.name } },
    })
  )
    throw new AppError('conflict', taken);
  const bot = await verifyBotToken(deps.slack, input.bot_token);
  const id = newId('sla');
  const { ciphertext, keyId } = deps.cipher.encrypt(input.bot_token, slackAppTokenContext(id));
  const webhook = {
    factoryId: input.factory_id,
    name: `slack-app-${input.name}`,
    signatureScheme: 'slack',
    providerSecret: input.signing_secret,
  };
  return createWithWebhook(deps, caller, webhook, taken, async (webhookId) =>
    slackAppView(
      deps.webhookBaseUrl,
      await deps.db.slackApp.create({
        data: {
          id,
          teamId: caller.team_id,
          name: input.name,
          slackTeamId: bot.teamId,
          botUserId: bot.userId,
          botTokenCiphertext: new Uint8Array(ciphertext),
          botTokenKeyId: keyId,
          webhookId,
          environmentId: input.environment_id || null,
          allowedChannels: input.allowed_channels,
          allowedUsers: input.allowed_users,
          createdById: caller.principal_id || null,
        },
      }),
    ),
  );
}

/** Another team's app is not found, exactly like a missing one. */
async function findApp(db: PrismaClient, caller: Caller, id: string): Promise<SlackApp> {
  const row = await db.slackApp.findFirst({ where: { id, teamId: caller.team_id } });
  if (!row) throw notFound('Slack app');
  return row;
}

/** Reading needs role ADMIN too: an app's view names the workspace, its channels and its people. */
export async function listSlackApps(deps: SlackAppDeps, caller: Caller): Promise<SlackAppView[]> {
  requireFactoryManager(caller, "Listing the team's Slack apps");
  const rows = await deps.db.slackApp.findMany({
    where: { teamId: caller.team_id },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
  });
  return rows.map((r) => slackAppView(deps.webhookBaseUrl, r));
}

export async function getSlackApp(deps: SlackAppDeps, caller: Caller, id: string): Promise<SlackAppView> {
  const row = await findApp(deps.db, caller, id);
  requireFactoryManager(caller, 'Reading a Slack app');
  return slackAppView(deps.webhookBaseUrl, row);
}

/** Removes the app, its webhook (Slack's deliveries get 404 at once), its threads and the posts it still owed. */
export async function deleteSlackApp(deps: SlackAppDeps, caller: Caller, id: string): Promise<void> {
  const row = await findApp(deps.db, caller, id);
  requireFactoryManager(caller, 'Removing a Slack app');
  await removeIntegrationWebhook(deps, row.webhookId);
}

/**
 * Slack refused the bot token for good: the app is marked broken with Slack's reason until it is registered again,
 * and the posts it still owed are dropped (nothing retries a token that cannot work).
 */
export async function markSlackAppBroken(db: PrismaClient, id: string, reason: string): Promise<void> {
  await db.$transaction([
    db.slackApp.updateMany({
      where: { id, status: 'active' },
      data: { status: 'broken', brokenReason: reason.slice(0, 500) },
    }),
    db.slackPost.deleteMany({ where: { slackAppId: id } }),
  ]);
}
