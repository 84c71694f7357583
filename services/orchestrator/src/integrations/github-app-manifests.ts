import { createHash, randomBytes } from 'node:crypto';
import { AppError, invalidField } from '@conveyor/errors';
import { newId, type GitHubAppManifest, type PrismaClient } from '@conveyor/db';
import type { Caller } from '../auth/caller';
import { loadFactory } from '../factories/factories';
import { convertManifestCode } from '../github/app-manifest-conversion';
import { ingressUrl } from '../webhooks/webhook-rules';
import {
  checkGitHubAppSettings,
  createGitHubApp,
  type GitHubAppDeps,
  type GitHubAppSettings,
  type GitHubAppView,
} from './github-apps';

export interface StartManifestInput extends GitHubAppSettings {
  /** The organization that will own the App (empty: the user who creates it). */
  organization: string;
  /** Where GitHub sends the browser back with the code (the gateway's callback). */
  redirect_url: string;
  /** The App's homepage (the console). */
  homepage_url: string;
  /** GitHub's web pages, where the browser creates the App (the gateway's GITHUB_WEB_URL, which its CSP allows). */
  github_web_url: string;
}

export interface ManifestStart {
  postUrl: string;
  manifest: Record<string, unknown>;
  state: string;
  expiresAt: Date;
  webhookUrl: string;
}

/** GitHub's codes live an hour; a pending registration far less, so a leaked link goes stale quickly. */
const MANIFEST_TTL_MS = 10 * 60_000;
/** Unfinished flows a team may have at once: each is a row until it expires. */
const MAX_PENDING_PER_TEAM = 20;
const ORGANIZATION = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$/;
/** GitHub's codes are short hex strings; anything else is no code of GitHub's. */
const CODE = /^[A-Za-z0-9_-]{1,128}$/;

/** What the App asks GitHub for: what its runs and reports use (docs/integrations.md "GitHub App"). */
const PERMISSIONS = {
  contents: 'write',
  pull_requests: 'write',
  issues: 'write',
  checks: 'write',
  metadata: 'read',
};
const EVENTS = ['issues', 'issue_comment', 'pull_request_review', 'pull_request_review_comment'];

/** Only the state's hash is stored and looked up, so neither a database reader nor a timing can learn a live state. */
const hashState = (state: string): string => createHash('sha256').update(state, 'utf8').digest('hex');

/** Unknown, expired, used, or not the presenter's: one answer for all, so the callback is no oracle. */
const invalidState = () =>
  invalidField('state', 'state is unknown, expired or already used: start creating the GitHub App again');

/**
 * Starts creating an App through GitHub's manifest flow: the registration is checked as POST
 * /integrations/github-apps checks it, then kept pending (10 minutes, single use, bound to the caller) with the
 * webhook's ID chosen now, so the manifest can name the webhook URL before the App, its secret and the webhook exist.
 */
export async function startGitHubAppManifest(
  deps: GitHubAppDeps,
  caller: Caller,
  input: StartManifestInput & { factory_id: string },
): Promise<ManifestStart> {
  await checkGitHubAppSettings(deps, caller, input);
  if (input.organization && !ORGANIZATION.test(input.organization))
    throw invalidField('organization', 'organization is not a GitHub organization login');
  await loadFactory(deps.db, caller, input.factory_id);
  const now = new Date();
  await deps.db.gitHubAppManifest.deleteMany({ where: { expiresAt: { lte: now } } });
  const pending = await deps.db.gitHubAppManifest.count({ where: { teamId: caller.team_id } });
  if (pending >= MAX_PENDING_PER_TEAM)
    throw new AppError(
      'conflict',
      `A team may have at most ${MAX_PENDING_PER_TEAM} GitHub Apps being created at once`,
    );

  const state = randomBytes(32).toString('base64url');
  const webhookId = newId('wh');
  const expiresAt = new Date(now.getTime() + MANIFEST_TTL_MS);
  await deps.db.gitHubAppManifest.create({
    data: {
      id: newId('ghm'),
      teamId: caller.team_id,
      stateHash: hashState(state),
      principalId: caller.principal_id,
      apiKeyId: caller.api_key_id || null,
      name: input.name,
      factoryId: input.factory_id,
      webhookId,
      environmentId: input.environment_id || null,
      triggerLabel: input.trigger_label || null,
      repositories: input.repositories,
      allowedUsers: input.allowed_users,
      expiresAt,
    },
  });
  const webhookUrl = ingressUrl(deps.webhookBaseUrl, webhookId, 'signature');
  const web = input.github_web_url.replace(/\/+$/, '');
  const owner = input.organization ? `/organizations/${input.organization}` : '';
  return {
    postUrl: `${web}${owner}/settings/apps/new?state=${state}`,
    manifest: {
      name: input.name,
      url: input.homepage_url,
      hook_attributes: { url: webhookUrl, active: true },
      redirect_url: input.redirect_url,
      public: false,
      default_permissions: PERMISSIONS,
      default_events: EVENTS,
    },
    state,
    expiresAt,
    webhookUrl,
  };
}

/**
 * GitHub sent the browser back: the state (the only authority, the browser carries no key) is consumed, then the code
 * exchanged for the App's ID, key and webhook secret, and the App registered as POST /integrations/github-apps
 * registers it (GET /app with the key, the key encrypted, the secret a team secret), as the principal that started.
 * `presented` is the caller when the request did carry a key: it must be the one that started.
 */
export async function completeGitHubAppManifest(
  deps: GitHubAppDeps,
  presented: Caller | undefined,
  state: string,
  code: string,
): Promise<GitHubAppView> {
  if (state.length > 100) throw invalidState();
  const row = await deps.db.gitHubAppManifest.findUnique({ where: { stateHash: hashState(state) } });
  const now = new Date();
  if (
    !row ||
    row.expiresAt <= now ||
    (presented && (presented.team_id !== row.teamId || presented.principal_id !== row.principalId))
  )
    throw invalidState();
  // Single use: of two requests with one state, only the one that deletes the row goes on.
  const { count } = await deps.db.gitHubAppManifest.deleteMany({ where: { id: row.id } });
  if (count !== 1) throw invalidState();
  const caller = await registrant(deps.db, row, now);
  if (!CODE.test(code)) throw invalidField('code', 'code is not a code GitHub issued');
  const settings = {
    name: row.name,
    factory_id: row.factoryId,
    environment_id: row.environmentId ?? '',
    trigger_label: row.triggerLabel ?? '',
    repositories: row.repositories,
    allowed_users: row.allowedUsers,
  };
  // Still an admin, the name still free, the environment still theirs: checked before GitHub hands over the key.
  await checkGitHubAppSettings(deps, caller, settings);
  const app = await convertManifestCode(deps.github, code);
  return createGitHubApp(
    deps,
    caller,
    { ...settings, app_id: app.appId, private_key: app.pem, webhook_secret: app.webhookSecret },
    row.webhookId,
  );
}

/**
 * The caller who started the flow, as of now: their current role (one no longer an admin registers nothing), and
 * their key still valid when a key started it.
 */
async function registrant(db: PrismaClient, row: GitHubAppManifest, now: Date): Promise<Caller> {
  const user = await db.user.findFirst({ where: { id: row.principalId, teamId: row.teamId } });
  const key = row.apiKeyId ? await db.apiKey.findUnique({ where: { id: row.apiKeyId } }) : undefined;
  const keyLapsed =
    key === null || (key && (key.revokedAt !== null || (key.expiresAt !== null && key.expiresAt <= now)));
  if (!user || keyLapsed) throw invalidState();
  return {
    team_id: row.teamId,
    principal_type: 'USER',
    principal_id: user.id,
    role: user.role,
    api_key_id: row.apiKeyId ?? '',
    run_id: '',
    display_name: user.displayName,
    email: user.email,
  };
}
