import { AppError } from '@conveyor/errors';
import { newId, type Prisma, type PrismaClient, type Webhook } from '@conveyor/db';
import type { Caller } from '../auth/caller';
import { webhookSecretContext, type SecretCipher } from '../secrets/secret-cipher';
import { readTeamSecretValue } from '../secrets/team-secrets';
import { credentialColumns } from '../webhooks/webhook-config';
import { credentialProblem, ingressUrl } from '../webhooks/webhook-rules';
import type { DefinitionError } from './definition-files';
import { githubAppAdapter } from './integration-kinds/github-app-adapter';
import type {
  AdapterContext,
  Body,
  IntegrationAdapter,
  IntegrationProviders,
  Mended,
} from './integration-kinds/integration-adapter';
import { linearAdapter } from './integration-kinds/linear-adapter';
import { slackAppAdapter } from './integration-kinds/slack-app-adapter';
import {
  INTEGRATION_KINDS,
  type IntegrationDefinition,
  type IntegrationKind,
} from './integration-definition';
import { zodMessages } from './zod-messages';

export type { IntegrationProviders } from './integration-kinds/integration-adapter';

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
  adapter: AdapterContext;
  tx: Prisma.TransactionClient;
  caller: Caller;
  factoryId: string;
  fail: (message: string) => void;
  changedWebhooks: string[];
}

type Owned = { id: string; definedAsCode: boolean; webhook: Webhook };

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

function underLimit(ctx: Context, label: string, count: number): boolean {
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

/**
 * One definition through its kind's adapter: the registration's rules, ownership and the per-team limit, the
 * provider's check when the credential (or what the adapter says needs it) changed, the integration's webhook, then
 * created, updated with what changed, or left unchanged.
 */
async function applyWith<Input, Row extends Owned, Facts, Fields, Columns>(
  adapter: IntegrationAdapter<Input, Row, Facts, Fields, Columns>,
  ctx: Context,
  def: IntegrationDefinition,
  body: Body,
): Promise<AppliedIntegration | undefined> {
  const { label } = adapter;
  const teamId = ctx.caller.team_id;
  const input = await check(ctx, () => adapter.parse(ctx.adapter, body));
  if (!input) return undefined;
  const existing = await adapter.find(ctx.tx, teamId, def.name);
  if (!ownedHere(ctx, label, def.name, existing)) return undefined;
  if (!existing && !underLimit(ctx, label, await adapter.count(ctx.tx, teamId))) return undefined;
  const credential = body[adapter.credential] as string;
  const credentialChanged = !existing || adapter.storedCredential(ctx.deps.cipher, existing) !== credential;
  const recheck = !existing || credentialChanged || adapter.recheck?.(existing, input) === true;
  const facts = recheck
    ? await check(ctx, () => adapter.verify(ctx.adapter, input))
    : adapter.known(existing);
  if (!facts) return undefined;
  const webhook = await integrationWebhook(ctx, existing?.webhook ?? null, {
    name: `${adapter.webhook.prefix}-${def.name}`,
    scheme: adapter.webhook.scheme,
    secretName: def.secretNames[adapter.webhook.secretField]!,
    secret: body[adapter.webhook.secretField] as string,
  });
  if (!webhook) return undefined;
  const id = existing?.id ?? newId(adapter.idPrefix);
  const fields = adapter.fields(input, facts);
  const columns = () => adapter.encrypt(ctx.deps.cipher, id, credential);
  const url = ingressUrl(ctx.deps.webhookBaseUrl, webhook.id, 'signature');
  const result = { name: def.name, kind: def.kind, id, url };
  if (!existing) {
    await adapter.create(ctx.tx, {
      id,
      teamId,
      name: def.name,
      webhookId: webhook.id,
      definedAsCode: true,
      createdById: ctx.caller.principal_id || null,
      ...fields,
      ...columns(),
    });
    return { ...result, action: 'created' };
  }
  const changed = [
    ...differing(adapter.compare(existing, fields)),
    ...(credentialChanged ? [adapter.credential] : []),
    ...(webhook.changed ? [adapter.webhook.secretField] : []),
  ];
  if (changed.length === 0) return { ...result, action: 'unchanged' };
  const credentialUpdate: Partial<Columns> = credentialChanged ? columns() : {};
  // Credentials the provider just accepted mend a broken integration.
  const mended: Partial<Mended> = recheck ? MENDED : {};
  await adapter.update(ctx.tx, id, { ...fields, ...credentialUpdate, ...mended });
  return { ...result, action: 'updated', changed };
}

const MENDED: Mended = { status: 'active', brokenReason: null };

/** One kind's apply: adding a kind is adding its adapter to the table below. */
const applying =
  <Input, Row extends Owned, Facts, Fields, Columns>(
    adapter: IntegrationAdapter<Input, Row, Facts, Fields, Columns>,
  ) =>
  (ctx: Context, def: IntegrationDefinition, body: Body) =>
    applyWith(adapter, ctx, def, body);

const APPLY_KIND: Record<IntegrationKind, ReturnType<typeof applying>> = {
  github_app: applying(githubAppAdapter),
  slack: applying(slackAppAdapter),
  linear: applying(linearAdapter),
};

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
      adapter: { db: deps.db, caller, providers: deps.providers },
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
