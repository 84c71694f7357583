import { AppError, invalidField, notFound } from '@conveyor/errors';
import { newId, type GitHubApp, type PrismaClient } from '@conveyor/db';
import type { Caller } from '../auth/caller';
import { ENVIRONMENT_ID, findEnvironmentForCaller } from '../catalog/environment-access';
import { requireFactoryManager } from '../factories/permissions';
import { parseAppPrivateKey, verifyApp, type AppCredentials } from '../github/github-app-auth';
import type { GitHubApi } from '../github/github-rest';
import { githubAppKeyContext, type SecretCipher } from '../secrets/secret-cipher';
import type { WebhookDeps } from '../webhooks/manage-webhooks';
import { ingressUrl } from '../webhooks/webhook-rules';
import { createWithWebhook, removeIntegrationWebhook } from './integration-webhook';

export interface GitHubAppDeps extends WebhookDeps {
  github: GitHubApi;
  /** Drops an App's cached installation tokens when it goes. */
  forgetTokens: (githubAppId: string) => void;
}

export interface CreateGitHubAppInput {
  name: string;
  factory_id: string;
  app_id: string;
  private_key: string;
  webhook_secret: string;
  environment_id: string;
  trigger_label: string;
  repositories: string[];
  allowed_users: string[];
}

export interface GitHubAppView {
  row: GitHubApp;
  webhookUrl: string;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
const REPOSITORY = /^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/;
const LOGIN = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:\[bot\])?$/;
/** Apps per team: each is one webhook of a factory (which holds at most 20). */
const MAX_APPS_PER_TEAM = 10;

/** What a registration says besides the App's credentials (the manifest flow knows these before the App exists). */
export type GitHubAppSettings = Omit<CreateGitHubAppInput, 'app_id' | 'private_key' | 'webhook_secret'>;

const bad = (message: string) => new AppError('invalid_request', message);

function validateSettings(input: GitHubAppSettings): void {
  if (!NAME.test(input.name)) throw bad('name must match [A-Za-z0-9][A-Za-z0-9_.-]{0,63}');
  if (input.trigger_label.length > 50) throw bad('trigger_label must be at most 50 characters');
  const badRepository = input.repositories.find((r) => !REPOSITORY.test(r));
  if (badRepository !== undefined) throw bad(`repositories: "${badRepository}" is not owner/repo`);
  const badLogin = input.allowed_users.find((u) => !LOGIN.test(u));
  if (badLogin !== undefined) throw bad(`allowed_users: "${badLogin}" is not a GitHub login`);
}

function validateCredentials(input: CreateGitHubAppInput): void {
  if (!/^[1-9][0-9]{0,19}$/.test(input.app_id))
    throw bad('app_id must be the App ID GitHub shows (a number)');
  if (input.webhook_secret.length < 16 || input.webhook_secret.length > 256)
    throw bad('webhook_secret must be 16 to 256 characters (the secret set on the App in GitHub)');
}

export function validateGitHubApp(input: CreateGitHubAppInput): void {
  validateSettings(input);
  validateCredentials(input);
}

/**
 * Whether the caller may register an App with these settings: an admin, valid fields, an environment the caller can
 * reach (the App's runs are created as its registrant, so one they could not use is refused now, as a run would be),
 * room in the team and the name free.
 */
export async function checkGitHubAppSettings(
  deps: GitHubAppDeps,
  caller: Caller,
  input: GitHubAppSettings,
): Promise<void> {
  requireFactoryManager(caller, 'Registering a GitHub App');
  validateSettings(input);
  if (input.environment_id) {
    if (!ENVIRONMENT_ID.test(input.environment_id))
      throw bad('environment_id must be 22 characters of [A-Za-z0-9]');
    await findEnvironmentForCaller(deps.db, caller, input.environment_id);
  }
  const count = await deps.db.gitHubApp.count({ where: { teamId: caller.team_id } });
  if (count >= MAX_APPS_PER_TEAM)
    throw new AppError('conflict', `A team may register at most ${MAX_APPS_PER_TEAM} GitHub Apps`);
  if (
    await deps.db.gitHubApp.findUnique({
      where: { teamId_name: { teamId: caller.team_id, name: input.name } },
    })
  )
    throw new AppError('conflict', `A GitHub App named "${input.name}" is already registered`);
}

export const githubAppView = (webhookBaseUrl: string, row: GitHubApp): GitHubAppView => ({
  row,
  webhookUrl: ingressUrl(webhookBaseUrl, row.webhookId, 'signature'),
});

/** The App's credentials, decrypted (orchestrator memory only). */
export function appCredentials(cipher: SecretCipher, row: GitHubApp): AppCredentials {
  const pem = cipher.decrypt(row.privateKeyCiphertext, row.privateKeyKeyId, githubAppKeyContext(row.id));
  return { appId: row.appId, privateKey: parseAppPrivateKey(pem) };
}

/**
 * Registers an App: the key is checked against GitHub first (GET /app signed with it: a wrong key or App ID is a 400
 * with GitHub's reason, and the answer names the App's bot), then its webhook is created in the factory with the
 * webhook secret as a github-signature webhook (a team secret, like any webhook's), then the App with its key
 * encrypted. Nothing of the key or the secret is ever returned.
 */
export async function createGitHubApp(
  deps: GitHubAppDeps,
  caller: Caller,
  input: CreateGitHubAppInput,
  /** The webhook's ID when the App was told its URL before it existed (github-app-manifests.ts). */
  webhookId?: string,
): Promise<GitHubAppView> {
  await checkGitHubAppSettings(deps, caller, input);
  validateCredentials(input);
  const privateKey = parseAppPrivateKey(input.private_key);
  let slug: string;
  try {
    ({ slug } = await verifyApp(deps.github, { appId: input.app_id, privateKey }));
  } catch (err) {
    if (err instanceof AppError && err.code === 'external_authentication_required')
      throw invalidField('private_key', `GitHub refused app_id and private_key: ${err.message}`);
    throw err;
  }
  const id = newId('gha');
  const { ciphertext, keyId } = deps.cipher.encrypt(input.private_key, githubAppKeyContext(id));
  const webhook = {
    factoryId: input.factory_id,
    name: `github-app-${input.name}`,
    signatureScheme: 'github',
    providerSecret: input.webhook_secret,
    ...(webhookId ? { id: webhookId } : {}),
  };
  return createWithWebhook(
    deps,
    caller,
    webhook,
    `A GitHub App named "${input.name}" is already registered`,
    async (webhookId) =>
      githubAppView(
        deps.webhookBaseUrl,
        await deps.db.gitHubApp.create({
          data: {
            id,
            teamId: caller.team_id,
            name: input.name,
            appId: input.app_id,
            slug,
            botLogin: `${slug}[bot]`,
            privateKeyCiphertext: new Uint8Array(ciphertext),
            privateKeyKeyId: keyId,
            webhookId,
            environmentId: input.environment_id || null,
            triggerLabel: input.trigger_label || null,
            repositories: input.repositories,
            allowedUsers: input.allowed_users,
            createdById: caller.principal_id || null,
          },
        }),
      ),
  );
}

async function findApp(db: PrismaClient, caller: Caller, id: string): Promise<GitHubApp> {
  const row = await db.gitHubApp.findFirst({ where: { id, teamId: caller.team_id } });
  if (!row) throw notFound('GitHub App');
  return row;
}

export async function listGitHubApps(deps: GitHubAppDeps, caller: Caller): Promise<GitHubAppView[]> {
  const rows = await deps.db.gitHubApp.findMany({
    where: { teamId: caller.team_id },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
  });
  return rows.map((r) => githubAppView(deps.webhookBaseUrl, r));
}

export async function getGitHubApp(deps: GitHubAppDeps, caller: Caller, id: string): Promise<GitHubAppView> {
  return githubAppView(deps.webhookBaseUrl, await findApp(deps.db, caller, id));
}

/** Removes the App and its webhook (senders get 404 at once); the webhook's team secret stays, like any webhook's. */
export async function deleteGitHubApp(deps: GitHubAppDeps, caller: Caller, id: string): Promise<void> {
  const row = await findApp(deps.db, caller, id);
  requireFactoryManager(caller, 'Removing a GitHub App');
  await removeIntegrationWebhook(deps, row.webhookId);
  deps.forgetTokens(row.id);
}

/** GitHub refused the App's credentials: the App is marked broken with GitHub's reason until it is registered again. */
export async function markGitHubAppBroken(db: PrismaClient, id: string, reason: string): Promise<void> {
  await db.gitHubApp.updateMany({
    where: { id, status: 'active' },
    data: { status: 'broken', brokenReason: reason.slice(0, 500) },
  });
}
