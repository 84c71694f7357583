import { AppError } from '@conveyor/errors';
import { newId, type Prisma, type PrismaClient } from '@conveyor/db';
import type { Caller } from '../auth/caller';
import { validateAgentConfig } from '../automations/automations';
import { loadFactory } from '../factories/factories';
import { requireFactoryManager } from '../factories/permissions';
import { webhookSecretContext, type SecretCipher } from '../secrets/secret-cipher';
import { readTeamSecretValue } from '../secrets/team-secrets';
import {
  credentialProblem,
  ingressUrl,
  isValidHeaderName,
  MAX_WEBHOOKS_PER_FACTORY,
} from '../webhooks/webhook-rules';
import type { WebhookVersions } from '../webhooks/webhook-versions';
import { credentialColumns, lockFactoryForWebhooks } from '../webhooks/webhook-config';
import { applyIntegrations, type AppliedIntegration, type IntegrationProviders } from './apply-integrations';
import { parseDefinitionFiles, type DefinitionError } from './definition-files';

export interface ApplyDeps {
  db: PrismaClient;
  cipher: SecretCipher;
  versions: WebhookVersions;
  webhookBaseUrl: string;
  providers: IntegrationProviders;
}

export type ApplyAction = 'created' | 'updated' | 'unchanged';

export interface AppliedDefinition {
  name: string;
  id: string;
  action: ApplyAction;
  url?: string;
}

export interface ApplyResult {
  webhooks: AppliedDefinition[];
  automations: AppliedDefinition[];
  integrations: AppliedIntegration[];
}

class ApplyFailed extends Error {
  constructor(readonly errors: DefinitionError[]) {
    super('definitions rejected');
  }
}

function rejection(errors: DefinitionError[]): AppError {
  const summary = errors.map((e) => `${e.file}: ${e.message}`).join('; ');
  return new AppError('invalid_request', `Definitions not applied: ${summary}`, { details: { errors } });
}

/** Key order does not count (PostgreSQL's jsonb stores keys in its own order). */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, canonical((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}
const sameJson = (a: unknown, b: unknown): boolean =>
  JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));

/**
 * Applies webhook, integration and automation definition files to a factory, all or nothing (one transaction). A
 * webhook's UID is assigned when its file first applies and kept by its file name from then on; every apply re-reads
 * each webhook's and integration's team secrets, which is how a new managed-secret value takes effect. Files absent
 * from the request are left alone (applying is not a sync that deletes). New or changed integration credentials are
 * checked with their provider inside the transaction, hence its longer deadline.
 */
export async function applyDefinitions(
  deps: ApplyDeps,
  caller: Caller,
  factoryId: string,
  files: ReadonlyArray<{ path: string; content: string }>,
): Promise<ApplyResult> {
  requireFactoryManager(caller, 'Applying definitions');
  await loadFactory(deps.db, caller, factoryId);
  if (files.length === 0) throw new AppError('invalid_request', 'no definition files given');
  const parsed = parseDefinitionFiles(files);
  if (parsed.errors.length > 0) throw rejection(parsed.errors);

  const changedWebhooks: string[] = [];
  let result: ApplyResult;
  try {
    result = await deps.db.$transaction(
      async (tx) => {
        await lockFactoryForWebhooks(tx, caller.team_id, factoryId);
        const errors: DefinitionError[] = [];
        const webhooks: AppliedDefinition[] = [];
        let created = 0;

        for (const def of parsed.webhooks) {
          const fail = (message: string) => errors.push({ file: def.file, message });
          const existing = await tx.webhook.findUnique({
            where: { factoryId_name: { factoryId, name: def.name } },
          });
          if (def.uid !== undefined && existing?.id !== def.uid) {
            const claimed = await tx.webhook.findFirst({ where: { id: def.uid, factoryId } });
            fail(
              claimed
                ? `uid ${def.uid} belongs to webhook "${claimed.name}"${claimed.definitionName ? ` (webhooks/${claimed.definitionName}.yaml)` : ''}: renaming a webhook defined as code is unsupported; keep its file name, or remove the uid key to create a new webhook`
                : `uid ${def.uid} is not a webhook of this factory; remove the uid key to create a new webhook`,
            );
            continue;
          }
          if (existing && existing.definitionName !== def.name) {
            fail(
              `a webhook named "${def.name}" already exists and is managed through the API; definitions cannot take it over`,
            );
            continue;
          }
          if (def.deliveryIdHeader !== undefined && !isValidHeaderName(def.deliveryIdHeader)) {
            fail('deliveryIdHeader must be an HTTP header name');
            continue;
          }
          const secret = await readTeamSecretValue(tx, deps.cipher, caller.team_id, def.secretName);
          if (secret === undefined) {
            fail(
              `secretName "${def.secretName}" does not name a team secret; create it first (PUT /v1/secrets/${def.secretName})`,
            );
            continue;
          }
          const problem = credentialProblem(def.authMode, def.signatureScheme, secret);
          if (problem) {
            fail(`team secret "${def.secretName}" ${problem}`);
            continue;
          }
          const fields = {
            authMode: def.authMode,
            signatureScheme: def.authMode === 'signature' ? (def.signatureScheme ?? null) : null,
            secretName: def.secretName,
            deliveryIdHeader: def.deliveryIdHeader?.toLowerCase() ?? null,
            enabled: def.enabled,
          };
          if (!existing) {
            const uid = newId('wh');
            await tx.webhook.create({
              data: {
                id: uid,
                teamId: caller.team_id,
                factoryId,
                name: def.name,
                definitionName: def.name,
                createdById: caller.principal_id,
                ...fields,
                ...credentialColumns(deps.cipher, uid, secret),
              },
            });
            created++;
            changedWebhooks.push(uid);
            webhooks.push({
              name: def.name,
              id: uid,
              action: 'created',
              url: ingressUrl(deps.webhookBaseUrl, uid, def.authMode),
            });
            continue;
          }
          const current =
            existing.secretCiphertext && existing.secretKeyId
              ? deps.cipher.decrypt(
                  existing.secretCiphertext,
                  existing.secretKeyId,
                  webhookSecretContext(existing.id),
                )
              : undefined;
          const unchanged =
            current === secret &&
            existing.authMode === fields.authMode &&
            existing.signatureScheme === fields.signatureScheme &&
            existing.secretName === fields.secretName &&
            existing.deliveryIdHeader === fields.deliveryIdHeader &&
            existing.enabled === fields.enabled;
          if (!unchanged) {
            await tx.webhook.update({
              where: { id: existing.id },
              data: {
                ...fields,
                ...(current !== secret && credentialColumns(deps.cipher, existing.id, secret)),
              },
            });
            changedWebhooks.push(existing.id);
          }
          webhooks.push({
            name: def.name,
            id: existing.id,
            action: unchanged ? 'unchanged' : 'updated',
            url: ingressUrl(deps.webhookBaseUrl, existing.id, fields.authMode),
          });
        }

        const integrations = await applyIntegrations(
          deps,
          tx,
          caller,
          factoryId,
          parsed.integrations,
          errors,
          changedWebhooks,
        );

        if (created > 0 || integrations.some((i) => i.action === 'created')) {
          const count = await tx.webhook.count({ where: { factoryId } });
          if (count > MAX_WEBHOOKS_PER_FACTORY) {
            errors.push({
              file: 'webhooks/',
              message: `a factory holds at most ${MAX_WEBHOOKS_PER_FACTORY} webhooks; applying would make ${count}`,
            });
          }
        }

        const automations: AppliedDefinition[] = [];
        for (const def of parsed.automations) {
          const fail = (message: string) => errors.push({ file: def.file, message });
          const existing = await tx.automation.findUnique({
            where: { factoryId_name: { factoryId, name: def.name } },
          });
          if (def.id !== undefined && existing?.id !== def.id) {
            const claimed = await tx.automation.findFirst({ where: { id: def.id, factoryId } });
            fail(
              claimed
                ? `id ${def.id} belongs to automation "${claimed.name}": renaming an automation defined as code is unsupported; keep its file name, or remove the id key to create a new automation`
                : `id ${def.id} is not an automation of this factory; remove the id key to create a new automation`,
            );
            continue;
          }
          if (existing && existing.definitionName !== def.name) {
            fail(
              `an automation named "${def.name}" already exists and is managed through the API; definitions cannot take it over`,
            );
            continue;
          }
          let agentConfig: Record<string, unknown>;
          try {
            agentConfig = validateAgentConfig(def.agentConfig, 'agentConfig');
          } catch (err) {
            fail(err instanceof Error ? err.message : String(err));
            continue;
          }
          // Webhooks of this factory, including the ones this very apply created.
          const ids = def.trigger.filter.webhook_ids;
          const found = await tx.webhook.findMany({
            where: { factoryId, id: { in: ids } },
            select: { id: true },
          });
          const unknown = ids.filter((id) => !found.some((w) => w.id === id));
          if (unknown.length > 0) {
            fail(
              `trigger.filter.webhook_ids: ${unknown.join(', ')} is not a webhook UID of this factory (webhook_ids take UIDs, never file names)`,
            );
            continue;
          }
          const fields = {
            prompt: def.prompt,
            agentConfig: agentConfig as Prisma.InputJsonValue,
            enabled: def.enabled,
            trigger: def.trigger as unknown as Prisma.InputJsonValue,
            webhookIds: def.trigger.filter.webhook_ids,
          };
          if (!existing) {
            const id = newId('auto');
            await tx.automation.create({
              data: {
                id,
                teamId: caller.team_id,
                factoryId,
                name: def.name,
                definitionName: def.name,
                createdById: caller.principal_id,
                ...fields,
              },
            });
            automations.push({ name: def.name, id, action: 'created' });
            continue;
          }
          const unchanged =
            existing.prompt === fields.prompt &&
            existing.enabled === fields.enabled &&
            sameJson(existing.agentConfig, fields.agentConfig) &&
            sameJson(existing.trigger, fields.trigger) &&
            sameJson(existing.webhookIds, fields.webhookIds);
          if (!unchanged) await tx.automation.update({ where: { id: existing.id }, data: fields });
          automations.push({ name: def.name, id: existing.id, action: unchanged ? 'unchanged' : 'updated' });
        }

        if (errors.length > 0) throw new ApplyFailed(errors);
        return { webhooks, automations, integrations };
      },
      { timeout: 120_000 },
    );
  } catch (err) {
    if (err instanceof ApplyFailed) throw rejection(err.errors);
    throw err;
  }
  await deps.versions.bumpAll(changedWebhooks);
  return result;
}
