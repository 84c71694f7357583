import { AppError } from '@conveyor/errors';
import { newId, type Prisma, type PrismaClient, type Webhook } from '@conveyor/db';
import type { Caller } from '../auth/caller';
import { ENVIRONMENT_ID, findEnvironmentForCaller } from '../catalog/environment-access';
import { AppCredentialsRefused, parseAppPrivateKey, verifyApp } from '../github/github-app-auth';
import type { GitHubApi } from '../github/github-rest';
import { validateGitHubApp } from '../integrations/github-apps';
import { validateLinearIntegration } from '../integrations/linear/linear-integrations';
import { verifyBotToken, type SlackApiConfig } from '../integrations/slack/slack-api';
import { validateSlackApp } from '../integrations/slack/slack-apps';
import { LinearCredentialsRefused, viewer, type LinearApi } from '../linear/linear-graphql';
import {
  githubAppKeyContext,
  linearKeyContext,
  slackAppTokenContext,
  webhookSecretContext,
  type SecretCipher,
} from '../secrets/secret-cipher';
import { readTeamSecretValue } from '../secrets/team-secrets';
import { credentialColumns } from '../webhooks/webhook-config';
import { credentialProblem, ingressUrl } from '../webhooks/webhook-rules';
import type { DefinitionError } from './definition-files';
import {
  INTEGRATION_KINDS,
  type IntegrationDefinition,
  type IntegrationKind,
} from './integration-definition';
import { zodMessages } from './zod-messages';

/** The providers an integration's credentials are checked with before anything is stored (as registering does). */
export interface IntegrationProviders {
  github: GitHubApi;
  slack: SlackApiConfig;
  linear: LinearApi;
}

export interface IntegrationApplyDeps {
  db: PrismaClient;
  cipher: SecretCipher;
  webhookBaseUrl: string;
  providers: IntegrationProviders;
}

export interface AppliedIntegration {
  name: string;
  kind: IntegrationKind;
  id: string;
  action: 'created' | 'updated' | 'unchanged';
  /** What an update changed, by the API's field names (credentials named, never shown). */
  changed?: string[];
  url: string;
}

/** Integrations per team and kind, as registering allows (each is one webhook of a factory, which holds 20). */
const MAX_PER_TEAM = 10;

interface Context {
  deps: IntegrationApplyDeps;
  tx: Prisma.TransactionClient;
  caller: Caller;
  factoryId: string;
  fail: (message: string) => void;
  changedWebhooks: string[];
}

type Body = Record<string, unknown> & { name: string; factory_id: string };

/** `a: [stored, wanted]` → the fields whose values differ (arrays and maps compared as JSON). */
const differing = (fields: Record<string, [unknown, unknown]>): string[] =>
  Object.entries(fields)
    .filter(([, [stored, wanted]]) => JSON.stringify(stored) !== JSON.stringify(wanted))
    .map(([field]) => field);

/**
 * The integration's webhook (a signature webhook on the team secret the file names): created with it, its secret
 * re-read on every apply like a webhook definition's.
 */
async function integrationWebhook(
  ctx: Context,
  existing: Webhook | null,
  webhook: { name: string; scheme: string; secretName: string; secret: string },
): Promise<{ id: string; changed: boolean } | undefined> {
  const problem = credentialProblem('signature', webhook.scheme, webhook.secret);
  if (problem) {
    ctx.fail(`team secret "${webhook.secretName}" ${problem}`);
    return undefined;
  }
  if (existing) {
    const current =
      existing.secretCiphertext && existing.secretKeyId
        ? ctx.deps.cipher.decrypt(
            existing.secretCiphertext,
            existing.secretKeyId,
            webhookSecretContext(existing.id),
          )
        : undefined;
    if (current === webhook.secret && existing.secretName === webhook.secretName)
      return { id: existing.id, changed: false };
    await ctx.tx.webhook.update({
      where: { id: existing.id },
      data: {
        secretName: webhook.secretName,
        ...credentialColumns(ctx.deps.cipher, existing.id, webhook.secret),
      },
    });
    ctx.changedWebhooks.push(existing.id);
    return { id: existing.id, changed: true };
  }
  const taken = await ctx.tx.webhook.findUnique({
    where: { factoryId_name: { factoryId: ctx.factoryId, name: webhook.name } },
  });
  if (taken) {
    ctx.fail(
      `the factory already has a webhook named "${webhook.name}", which this integration's webhook would be`,
    );
    return undefined;
  }
  const id = newId('wh');
  await ctx.tx.webhook.create({
    data: {
      id,
      teamId: ctx.caller.team_id,
      factoryId: ctx.factoryId,
      name: webhook.name,
      createdById: ctx.caller.principal_id,
      authMode: 'signature',
      signatureScheme: webhook.scheme,
      secretName: webhook.secretName,
      enabled: true,
      ...credentialColumns(ctx.deps.cipher, id, webhook.secret),
    },
  });
  ctx.changedWebhooks.push(id);
  return { id, changed: true };
}

/** An existing row may be changed by its definition only, in the factory it was applied to. */
function ownedHere(
  ctx: Context,
  label: string,
  name: string,
  row: { definedAsCode: boolean; webhook: Webhook } | null,
): boolean {
  if (!row) return true;
  if (!row.definedAsCode) {
    ctx.fail(`a ${label} named "${name}" is registered through the API; definitions cannot take it over`);
    return false;
  }
  if (row.webhook.factoryId !== ctx.factoryId) {
    ctx.fail(
      `${label} "${name}" was applied to factory ${row.webhook.factoryId}; apply it there (moving it is unsupported)`,
    );
    return false;
  }
  return true;
}

async function underLimit(ctx: Context, label: string, count: number): Promise<boolean> {
  if (count < MAX_PER_TEAM) return true;
  ctx.fail(`a team may register at most ${MAX_PER_TEAM} ${label}s`);
  return false;
}

/** Runs a domain check, turning its refusal (an AppError the caller can fix) into the file's error. */
async function check<T>(ctx: Context, step: () => Promise<T> | T): Promise<T | undefined> {
  try {
    return await step();
  } catch (err) {
    if (err instanceof AppError && err.code !== 'resource_unavailable') {
      ctx.fail(err.message);
      return undefined;
    }
    throw err;
  }
}

async function applyGitHubApp(
  ctx: Context,
  def: IntegrationDefinition,
  body: Body,
): Promise<AppliedIntegration | undefined> {
  const label = 'GitHub App';
  const input = {
    name: body.name,
    factory_id: body.factory_id,
    app_id: body.app_id as string,
    private_key: body.private_key as string,
    webhook_secret: body.webhook_secret as string,
    environment_id: (body.environment_id as string | undefined) ?? '',
    trigger_label: (body.trigger_label as string | undefined) ?? '',
    repositories: (body.repositories as string[] | undefined) ?? [],
    allowed_users: (body.allowed_users as string[] | undefined) ?? [],
  };
  const privateKey = await check(ctx, () => {
    validateGitHubApp(input);
    return parseAppPrivateKey(input.private_key);
  });
  if (!privateKey) return undefined;
  if (input.environment_id) {
    const found = await check(ctx, async () => {
      if (!ENVIRONMENT_ID.test(input.environment_id))
        throw new AppError('invalid_request', 'environment_id must be 22 characters of [A-Za-z0-9]');
      return findEnvironmentForCaller(ctx.deps.db, ctx.caller, input.environment_id);
    });
    if (!found) return undefined;
  }
  const existing = await ctx.tx.gitHubApp.findUnique({
    where: { teamId_name: { teamId: ctx.caller.team_id, name: def.name } },
    include: { webhook: true },
  });
  if (!ownedHere(ctx, label, def.name, existing)) return undefined;
  if (
    !existing &&
    !(await underLimit(ctx, label, await ctx.tx.gitHubApp.count({ where: { teamId: ctx.caller.team_id } })))
  )
    return undefined;
  const storedKey =
    existing &&
    ctx.deps.cipher.decrypt(
      existing.privateKeyCiphertext,
      existing.privateKeyKeyId,
      githubAppKeyContext(existing.id),
    );
  const credentialsChanged = !existing || existing.appId !== input.app_id || storedKey !== input.private_key;
  let slug = existing?.slug ?? '';
  if (credentialsChanged) {
    const verified = await check(ctx, async () => {
      try {
        return await verifyApp(ctx.deps.providers.github, { appId: input.app_id, privateKey });
      } catch (err) {
        if (err instanceof AppCredentialsRefused)
          throw new AppError(
            'invalid_request',
            `private_key: GitHub refused app_id and private_key: ${err.githubReason}`,
          );
        throw err;
      }
    });
    if (!verified) return undefined;
    slug = verified.slug;
  }
  const webhook = await integrationWebhook(ctx, existing?.webhook ?? null, {
    name: `github-app-${def.name}`,
    scheme: 'github',
    secretName: def.secretNames.webhook_secret!,
    secret: input.webhook_secret,
  });
  if (!webhook) return undefined;
  const id = existing?.id ?? newId('gha');
  const fields = {
    appId: input.app_id,
    slug,
    botLogin: `${slug}[bot]`,
    environmentId: input.environment_id || null,
    triggerLabel: input.trigger_label || null,
    repositories: input.repositories,
    allowedUsers: input.allowed_users,
  };
  const key = () => {
    const { ciphertext, keyId } = ctx.deps.cipher.encrypt(input.private_key, githubAppKeyContext(id));
    return { privateKeyCiphertext: new Uint8Array(ciphertext), privateKeyKeyId: keyId };
  };
  const url = ingressUrl(ctx.deps.webhookBaseUrl, webhook.id, 'signature');
  if (!existing) {
    await ctx.tx.gitHubApp.create({
      data: {
        id,
        teamId: ctx.caller.team_id,
        name: def.name,
        ...fields,
        ...key(),
        webhookId: webhook.id,
        definedAsCode: true,
        createdById: ctx.caller.principal_id || null,
      },
    });
    return { name: def.name, kind: def.kind, id, action: 'created', url };
  }
  const changed = [
    ...differing({
      app_id: [existing.appId, fields.appId],
      environment_id: [existing.environmentId, fields.environmentId],
      trigger_label: [existing.triggerLabel, fields.triggerLabel],
      repositories: [existing.repositories, fields.repositories],
      allowed_users: [existing.allowedUsers, fields.allowedUsers],
    }),
    ...(storedKey !== input.private_key ? ['private_key'] : []),
    ...(webhook.changed ? ['webhook_secret'] : []),
  ];
  if (changed.length === 0) return { name: def.name, kind: def.kind, id, action: 'unchanged', url };
  await ctx.tx.gitHubApp.update({
    where: { id },
    data: {
      ...fields,
      ...(storedKey !== input.private_key && key()),
      // Credentials GitHub just accepted mend a broken App.
      ...(credentialsChanged && { status: 'active', brokenReason: null }),
    },
  });
  return { name: def.name, kind: def.kind, id, action: 'updated', changed, url };
}

async function applySlackApp(
  ctx: Context,
  def: IntegrationDefinition,
  body: Body,
): Promise<AppliedIntegration | undefined> {
  const label = 'Slack app';
  const input = {
    name: body.name,
    factory_id: body.factory_id,
    bot_token: body.bot_token as string,
    signing_secret: body.signing_secret as string,
    environment_id: (body.environment_id as string | undefined) ?? '',
    allowed_channels: (body.allowed_channels as string[] | undefined) ?? [],
    allowed_users: (body.allowed_users as string[] | undefined) ?? [],
  };
  const valid = await check(ctx, () => {
    validateSlackApp(input);
    return true;
  });
  if (!valid) return undefined;
  const existing = await ctx.tx.slackApp.findUnique({
    where: { teamId_name: { teamId: ctx.caller.team_id, name: def.name } },
    include: { webhook: true },
  });
  if (!ownedHere(ctx, label, def.name, existing)) return undefined;
  if (
    !existing &&
    !(await underLimit(ctx, label, await ctx.tx.slackApp.count({ where: { teamId: ctx.caller.team_id } })))
  )
    return undefined;
  const storedToken =
    existing &&
    ctx.deps.cipher.decrypt(
      existing.botTokenCiphertext,
      existing.botTokenKeyId,
      slackAppTokenContext(existing.id),
    );
  const tokenChanged = storedToken !== input.bot_token;
  let bot = existing ? { teamId: existing.slackTeamId, userId: existing.botUserId } : undefined;
  if (tokenChanged) {
    bot = await check(ctx, () => verifyBotToken(ctx.deps.providers.slack, input.bot_token));
    if (!bot) return undefined;
  }
  const webhook = await integrationWebhook(ctx, existing?.webhook ?? null, {
    name: `slack-app-${def.name}`,
    scheme: 'slack',
    secretName: def.secretNames.signing_secret!,
    secret: input.signing_secret,
  });
  if (!webhook || !bot) return undefined;
  const id = existing?.id ?? newId('sla');
  const fields = {
    slackTeamId: bot.teamId,
    botUserId: bot.userId,
    environmentId: input.environment_id || null,
    allowedChannels: input.allowed_channels,
    allowedUsers: input.allowed_users,
  };
  const token = () => {
    const { ciphertext, keyId } = ctx.deps.cipher.encrypt(input.bot_token, slackAppTokenContext(id));
    return { botTokenCiphertext: new Uint8Array(ciphertext), botTokenKeyId: keyId };
  };
  const url = ingressUrl(ctx.deps.webhookBaseUrl, webhook.id, 'signature');
  if (!existing) {
    await ctx.tx.slackApp.create({
      data: {
        id,
        teamId: ctx.caller.team_id,
        name: def.name,
        ...fields,
        ...token(),
        webhookId: webhook.id,
        definedAsCode: true,
        createdById: ctx.caller.principal_id || null,
      },
    });
    return { name: def.name, kind: def.kind, id, action: 'created', url };
  }
  const changed = [
    ...differing({
      environment_id: [existing.environmentId, fields.environmentId],
      allowed_channels: [existing.allowedChannels, fields.allowedChannels],
      allowed_users: [existing.allowedUsers, fields.allowedUsers],
    }),
    ...(tokenChanged ? ['bot_token'] : []),
    ...(webhook.changed ? ['signing_secret'] : []),
  ];
  if (changed.length === 0) return { name: def.name, kind: def.kind, id, action: 'unchanged', url };
  await ctx.tx.slackApp.update({
    where: { id },
    data: { ...fields, ...(tokenChanged && { ...token(), status: 'active', brokenReason: null }) },
  });
  return { name: def.name, kind: def.kind, id, action: 'updated', changed, url };
}

async function applyLinear(
  ctx: Context,
  def: IntegrationDefinition,
  body: Body,
): Promise<AppliedIntegration | undefined> {
  const label = 'Linear integration';
  const input = {
    name: body.name,
    factory_id: body.factory_id,
    api_key: body.api_key as string,
    webhook_secret: body.webhook_secret as string,
    agent_user_id: (body.agent_user_id as string | undefined) ?? '',
    environment_id: (body.environment_id as string | undefined) ?? '',
    trigger_label: (body.trigger_label as string | undefined) ?? '',
    team_repositories: (body.team_repositories as Record<string, string> | undefined) ?? {},
    pr_opened_state_id: (body.pr_opened_state_id as string | undefined) ?? '',
    run_ended_state_id: (body.run_ended_state_id as string | undefined) ?? '',
  };
  const valid = await check(ctx, () => {
    validateLinearIntegration(input);
    return true;
  });
  if (!valid) return undefined;
  const existing = await ctx.tx.linearIntegration.findUnique({
    where: { teamId_name: { teamId: ctx.caller.team_id, name: def.name } },
    include: { webhook: true },
  });
  if (!ownedHere(ctx, label, def.name, existing)) return undefined;
  if (
    !existing &&
    !(await underLimit(
      ctx,
      label,
      await ctx.tx.linearIntegration.count({ where: { teamId: ctx.caller.team_id } }),
    ))
  )
    return undefined;
  const storedKey =
    existing &&
    ctx.deps.cipher.decrypt(existing.apiKeyCiphertext, existing.apiKeyKeyId, linearKeyContext(existing.id));
  const keyChanged = storedKey !== input.api_key;
  let agent = existing ? { id: existing.agentUserId, name: existing.agentName } : undefined;
  // The agent's user is the key's own unless named; its name (for mentions) is known only for the key's own user.
  if (keyChanged || (existing && (input.agent_user_id || existing.agentUserId) !== existing.agentUserId)) {
    const me = await check(ctx, async () => {
      try {
        return await viewer(ctx.deps.providers.linear, input.api_key);
      } catch (err) {
        if (err instanceof LinearCredentialsRefused)
          throw new AppError('invalid_request', `api_key: Linear refused api_key: ${err.linearReason}`);
        throw err;
      }
    });
    if (!me) return undefined;
    const agentUserId = input.agent_user_id || me.id;
    agent = { id: agentUserId, name: agentUserId === me.id ? me.name : '' };
  }
  const webhook = await integrationWebhook(ctx, existing?.webhook ?? null, {
    name: `linear-${def.name}`,
    scheme: 'linear',
    secretName: def.secretNames.webhook_secret!,
    secret: input.webhook_secret,
  });
  if (!webhook || !agent) return undefined;
  const id = existing?.id ?? newId('lin');
  const fields = {
    agentUserId: agent.id,
    agentName: agent.name,
    environmentId: input.environment_id || null,
    triggerLabel: input.trigger_label || null,
    teamRepositories: input.team_repositories,
    prOpenedStateId: input.pr_opened_state_id || null,
    runEndedStateId: input.run_ended_state_id || null,
  };
  const key = () => {
    const { ciphertext, keyId } = ctx.deps.cipher.encrypt(input.api_key, linearKeyContext(id));
    return { apiKeyCiphertext: new Uint8Array(ciphertext), apiKeyKeyId: keyId };
  };
  const url = ingressUrl(ctx.deps.webhookBaseUrl, webhook.id, 'signature');
  if (!existing) {
    await ctx.tx.linearIntegration.create({
      data: {
        id,
        teamId: ctx.caller.team_id,
        name: def.name,
        ...fields,
        ...key(),
        webhookId: webhook.id,
        definedAsCode: true,
        createdById: ctx.caller.principal_id || null,
      },
    });
    return { name: def.name, kind: def.kind, id, action: 'created', url };
  }
  const changed = [
    ...differing({
      agent_user_id: [existing.agentUserId, fields.agentUserId],
      environment_id: [existing.environmentId, fields.environmentId],
      trigger_label: [existing.triggerLabel, fields.triggerLabel],
      team_repositories: [sorted(existing.teamRepositories), sorted(fields.teamRepositories)],
      pr_opened_state_id: [existing.prOpenedStateId, fields.prOpenedStateId],
      run_ended_state_id: [existing.runEndedStateId, fields.runEndedStateId],
    }),
    ...(keyChanged ? ['api_key'] : []),
    ...(webhook.changed ? ['webhook_secret'] : []),
  ];
  if (changed.length === 0) return { name: def.name, kind: def.kind, id, action: 'unchanged', url };
  await ctx.tx.linearIntegration.update({
    where: { id },
    data: { ...fields, ...(keyChanged && { ...key(), status: 'active', brokenReason: null }) },
  });
  return { name: def.name, kind: def.kind, id, action: 'updated', changed, url };
}

/** A JSON map's entries in key order (jsonb keeps keys in its own order). */
const sorted = (value: unknown): unknown =>
  value && typeof value === 'object' ? Object.entries(value).sort(([a], [b]) => a.localeCompare(b)) : value;

const APPLY_KIND = { github_app: applyGitHubApp, slack: applySlackApp, linear: applyLinear } as const;

/**
 * Applies `integrations/<name>.yaml` definitions inside the apply's transaction: each credential is read from the
 * team secret the file names (the caller's team only: another team's secret of that name is as absent as a missing
 * one), the body is checked with the API's schema and the registration's rules, and new or changed credentials are
 * checked with the provider before anything is written, as registering does. Errors go to `errors`; the caller
 * rolls everything back when there are any.
 */
export async function applyIntegrations(
  deps: IntegrationApplyDeps,
  tx: Prisma.TransactionClient,
  caller: Caller,
  factoryId: string,
  definitions: IntegrationDefinition[],
  errors: DefinitionError[],
  changedWebhooks: string[],
): Promise<AppliedIntegration[]> {
  const applied: AppliedIntegration[] = [];
  for (const def of definitions) {
    const ctx: Context = {
      deps,
      tx,
      caller,
      factoryId,
      changedWebhooks,
      fail: (message) => errors.push({ file: def.file, message }),
    };
    const secrets: Record<string, string> = {};
    for (const [field, secretName] of Object.entries(def.secretNames)) {
      const value = await readTeamSecretValue(tx, deps.cipher, caller.team_id, secretName);
      if (value === undefined)
        ctx.fail(
          `${field}.secretName "${secretName}" does not name a team secret; create it first (PUT /v1/secrets/${secretName})`,
        );
      else secrets[field] = value;
    }
    if (Object.keys(secrets).length < Object.keys(def.secretNames).length) continue;
    // The whole body through the API's schema, credentials included; a complaint about one names its team secret.
    const parsed = INTEGRATION_KINDS[def.kind].body.safeParse({
      ...def.settings,
      ...secrets,
      name: def.name,
      factory_id: factoryId,
    });
    if (!parsed.success) {
      for (const message of zodMessages(parsed.error)) {
        const field = message.split(' ')[0]!;
        const secretName = def.secretNames[field];
        ctx.fail(
          secretName ? `${field} (team secret "${secretName}")${message.slice(field.length)}` : message,
        );
      }
      continue;
    }
    const result = await APPLY_KIND[def.kind](ctx, def, parsed.data as Body);
    if (result) applied.push(result);
  }
  return applied;
}
