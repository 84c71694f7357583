import { AppError, invalidField, notFound } from '@conveyor/errors';
import { newId, type LinearIntegration, type PrismaClient } from '@conveyor/db';
import type { Caller } from '../../auth/caller';
import { requireFactoryManager } from '../../factories/permissions';
import { LinearCredentialsRefused, viewer, type LinearApi } from '../../linear/linear-graphql';
import { linearKeyContext, type SecretCipher } from '../../secrets/secret-cipher';
import type { WebhookDeps } from '../../webhooks/manage-webhooks';
import { ingressUrl } from '../../webhooks/webhook-rules';
import { createWithWebhook, removeIntegrationWebhook } from '../integration-webhook';

export interface LinearIntegrationDeps extends WebhookDeps {
  linear: LinearApi;
}

export interface CreateLinearIntegrationInput {
  name: string;
  factory_id: string;
  api_key: string;
  webhook_secret: string;
  agent_user_id: string;
  environment_id: string;
  trigger_label: string;
  team_repositories: Record<string, string>;
  pr_opened_state_id: string;
  run_ended_state_id: string;
}

export interface LinearIntegrationView {
  row: LinearIntegration;
  webhookUrl: string;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
/** Linear's IDs are UUIDs; a team is also named by its key (`ENG`). */
const LINEAR_ID = /^[A-Za-z0-9_-]{1,64}$/;
/** Integrations per team: each is one webhook of a factory (which holds at most 20). */
const MAX_PER_TEAM = 10;

export function validateLinearIntegration(input: CreateLinearIntegrationInput): void {
  const bad = (message: string) => new AppError('invalid_request', message);
  if (!NAME.test(input.name)) throw bad('name must match [A-Za-z0-9][A-Za-z0-9_.-]{0,63}');
  if (input.api_key.length < 8 || input.api_key.length > 512 || /\s/.test(input.api_key))
    throw bad('api_key must be a Linear API key or OAuth access token (8 to 512 characters, no spaces)');
  if (input.webhook_secret.length < 16 || input.webhook_secret.length > 256)
    throw bad("webhook_secret must be 16 to 256 characters (the webhook's signing secret shown by Linear)");
  if (input.trigger_label.length > 50) throw bad('trigger_label must be at most 50 characters');
  for (const [field, value] of [
    ['agent_user_id', input.agent_user_id],
    ['pr_opened_state_id', input.pr_opened_state_id],
    ['run_ended_state_id', input.run_ended_state_id],
  ] as const)
    if (value && !LINEAR_ID.test(value)) throw bad(`${field} must be a Linear ID`);
  const teams = Object.entries(input.team_repositories);
  if (teams.length > 50) throw bad('team_repositories may map at most 50 Linear teams');
  for (const [team, url] of teams) {
    if (!LINEAR_ID.test(team)) throw bad(`team_repositories: "${team}" is not a Linear team ID or key`);
    if (!URL.canParse(url) || url.length > 500)
      throw bad(`team_repositories: the repository of ${team} must be a URL`);
  }
}

export const linearIntegrationView = (
  webhookBaseUrl: string,
  row: LinearIntegration,
): LinearIntegrationView => ({
  row,
  webhookUrl: ingressUrl(webhookBaseUrl, row.webhookId, 'signature'),
});

/** The integration's key, decrypted (orchestrator memory only). */
export const linearKey = (cipher: SecretCipher, row: LinearIntegration): string =>
  cipher.decrypt(row.apiKeyCiphertext, row.apiKeyKeyId, linearKeyContext(row.id));

/**
 * Registers a Linear integration: the key is checked first with Linear's `viewer` query (a wrong key is a 400 with
 * Linear's reason and nothing is stored; the viewer is the agent's user unless one is named), then its webhook is
 * created in the factory with the signing secret as a linear-signature webhook, then the integration with the key
 * encrypted. Neither the key nor the secret is ever returned.
 */
export async function createLinearIntegration(
  deps: LinearIntegrationDeps,
  caller: Caller,
  input: CreateLinearIntegrationInput,
): Promise<LinearIntegrationView> {
  requireFactoryManager(caller, 'Registering a Linear integration');
  validateLinearIntegration(input);
  const conflict = `A Linear integration named "${input.name}" is already registered`;
  if ((await deps.db.linearIntegration.count({ where: { teamId: caller.team_id } })) >= MAX_PER_TEAM)
    throw new AppError('conflict', `A team may register at most ${MAX_PER_TEAM} Linear integrations`);
  if (
    await deps.db.linearIntegration.findUnique({
      where: { teamId_name: { teamId: caller.team_id, name: input.name } },
    })
  )
    throw new AppError('conflict', conflict);
  let me: { id: string; name: string };
  try {
    me = await viewer(deps.linear, input.api_key);
  } catch (err) {
    if (err instanceof LinearCredentialsRefused)
      throw invalidField('api_key', `Linear refused api_key: ${err.linearReason}`);
    throw err;
  }
  const agentUserId = input.agent_user_id || me.id;
  return createWithWebhook(
    deps,
    caller,
    {
      factoryId: input.factory_id,
      name: `linear-${input.name}`,
      signatureScheme: 'linear',
      providerSecret: input.webhook_secret,
    },
    conflict,
    async (webhookId) => {
      const id = newId('lin');
      const { ciphertext, keyId } = deps.cipher.encrypt(input.api_key, linearKeyContext(id));
      const row = await deps.db.linearIntegration.create({
        data: {
          id,
          teamId: caller.team_id,
          name: input.name,
          apiKeyCiphertext: new Uint8Array(ciphertext),
          apiKeyKeyId: keyId,
          agentUserId,
          agentName: agentUserId === me.id ? me.name : '',
          webhookId,
          environmentId: input.environment_id || null,
          triggerLabel: input.trigger_label || null,
          teamRepositories: input.team_repositories,
          prOpenedStateId: input.pr_opened_state_id || null,
          runEndedStateId: input.run_ended_state_id || null,
          createdById: caller.principal_id || null,
        },
      });
      return linearIntegrationView(deps.webhookBaseUrl, row);
    },
  );
}

async function findIntegration(db: PrismaClient, caller: Caller, id: string): Promise<LinearIntegration> {
  const row = await db.linearIntegration.findFirst({ where: { id, teamId: caller.team_id } });
  if (!row) throw notFound('Linear integration');
  return row;
}

export async function listLinearIntegrations(
  deps: LinearIntegrationDeps,
  caller: Caller,
): Promise<LinearIntegrationView[]> {
  const rows = await deps.db.linearIntegration.findMany({
    where: { teamId: caller.team_id },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
  });
  return rows.map((r) => linearIntegrationView(deps.webhookBaseUrl, r));
}

export async function getLinearIntegration(
  deps: LinearIntegrationDeps,
  caller: Caller,
  id: string,
): Promise<LinearIntegrationView> {
  return linearIntegrationView(deps.webhookBaseUrl, await findIntegration(deps.db, caller, id));
}

/** Removes the integration, its webhook (Linear's deliveries get 404 at once) and its unsent reports. */
export async function deleteLinearIntegration(
  deps: LinearIntegrationDeps,
  caller: Caller,
  id: string,
): Promise<void> {
  const row = await findIntegration(deps.db, caller, id);
  requireFactoryManager(caller, 'Removing a Linear integration');
  await removeIntegrationWebhook(deps, row.webhookId);
}

/** Linear refused the key: the integration is marked broken with Linear's reason until it is registered again. */
export async function markLinearIntegrationBroken(
  db: PrismaClient,
  id: string,
  reason: string,
): Promise<void> {
  await db.linearIntegration.updateMany({
    where: { id, status: 'active' },
    data: { status: 'broken', brokenReason: reason.slice(0, 500) },
  });
}
