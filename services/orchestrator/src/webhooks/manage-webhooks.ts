import { AppError } from '@conveyor/errors';
import { newId, type Prisma, type PrismaClient, type Webhook } from '@conveyor/db';
import type { Caller } from '../auth/caller';
import { generateStandardWebhooksSecret, generateWebhookSecret } from '@conveyor/webhook-auth';
import { loadFactory } from '../factories/factories';
import { requireFactoryManager } from '../factories/permissions';
import type { SecretCipher } from '../secrets/secret-cipher';
import {
  readTeamSecretValue,
  validateSecretName,
  validateSecretValue,
  writeTeamSecret,
} from '../secrets/team-secrets';
import type { WebhookVersions } from './webhook-versions';
import { credentialProblem, defaultSecretName, generatesSecret, type AuthMode } from './webhook-rules';
import { type WebhookView, type WebhookWithSecretView, viewWebhook, withSecret } from './webhook-view';
import {
  assertWebhookCapacity,
  credentialColumns,
  lockFactoryForWebhooks,
  validateWebhookConfig,
} from './webhook-config';

export interface WebhookDeps {
  db: PrismaClient;
  cipher: SecretCipher;
  versions: WebhookVersions;
  /** `{webhook_base_url}` of the ingress, for the URLs shown to users. */
  webhookBaseUrl: string;
}

type Tx = Prisma.TransactionClient;

export interface CreateWebhookInput {
  name: string;
  authMode?: string;
  signatureScheme?: string;
  providerSecret?: string;
  secretName?: string;
  deliveryIdHeader?: string;
  /** An ID chosen beforehand, so its URL could be handed out first (a GitHub App manifest names its webhook URL). */
  id?: string;
}

const notFound = () => new AppError('resource_not_found', 'Webhook not found');

async function uniqueDefaultSecretName(tx: Tx, teamId: string, webhookName: string): Promise<string> {
  const base = defaultSecretName(webhookName);
  for (let i = 1; ; i++) {
    const candidate = i === 1 ? base : `${base}_${i}`;
    if (
      !(await tx.teamSecret.findUnique({
        where: { teamId_name: { teamId, name: candidate } },
        select: { id: true },
      }))
    )
      return candidate;
  }
}

export async function createWebhook(
  deps: WebhookDeps,
  caller: Caller,
  factoryId: string,
  input: CreateWebhookInput,
): Promise<WebhookWithSecretView> {
  requireFactoryManager(caller, 'Creating a webhook');
  const config = validateWebhookConfig(input);
  const providerSecret = input.providerSecret ?? '';
  if (providerSecret && config.authMode !== 'signature') {
    throw new AppError(
      'invalid_request',
      'provider_secret applies to auth_mode signature only; token and url_token secrets are generated',
    );
  }
  if (providerSecret) validateSecretValue(providerSecret, 'provider_secret');
  const requestedSecretName = input.secretName?.trim() ?? '';
  if (requestedSecretName) validateSecretName(requestedSecretName, 'secret_name');
  await loadFactory(deps.db, caller, factoryId);

  const uid = input.id ?? newId('wh');
  const result = await deps.db.$transaction(async (tx) => {
    await lockFactoryForWebhooks(tx, caller.team_id, factoryId);
    await assertWebhookCapacity(tx, factoryId);
    if (
      await tx.webhook.findUnique({
        where: { factoryId_name: { factoryId, name: config.name } },
        select: { id: true },
      })
    ) {
      throw new AppError('conflict', `A webhook named "${config.name}" already exists in this factory`);
    }
    const secretName =
      requestedSecretName || (await uniqueDefaultSecretName(tx, caller.team_id, config.name));
    const existing = await readTeamSecretValue(tx, deps.cipher, caller.team_id, secretName);

    let credential: string | undefined;
    let shown: string | undefined;
    if (existing !== undefined) {
      // Reuse: the existing secret's value is never shown.
      if (providerSecret) {
        throw new AppError(
          'conflict',
          `Team secret "${secretName}" already exists: omit provider_secret to reuse it, or choose another secret_name`,
        );
      }
      const problem = credentialProblem(config.authMode, config.signatureScheme, existing);
      if (problem) throw new AppError('invalid_request', `Team secret "${secretName}" ${problem}`);
      credential = existing;
    } else if (providerSecret) {
      const problem = credentialProblem(config.authMode, config.signatureScheme, providerSecret);
      if (problem) throw new AppError('invalid_request', `provider_secret ${problem}`);
      credential = providerSecret;
    } else if (generatesSecret(config.authMode, config.signatureScheme)) {
      credential = shown =
        config.authMode === 'signature' ? generateStandardWebhooksSecret() : generateWebhookSecret();
    }
    // else: a provider that issues its secret after seeing the URL; deliveries are refused until the second step.
    if (credential !== undefined && existing === undefined) {
      await writeTeamSecret(tx, deps.cipher, {
        teamId: caller.team_id,
        name: secretName,
        value: credential,
        createdById: caller.principal_id,
      });
    }
    const row = await tx.webhook.create({
      data: {
        id: uid,
        teamId: caller.team_id,
        factoryId,
        name: config.name,
        authMode: config.authMode,
        signatureScheme: config.signatureScheme,
        secretName,
        deliveryIdHeader: config.deliveryIdHeader,
        enabled: true,
        createdById: caller.principal_id,
        ...credentialColumns(deps.cipher, uid, credential),
      },
    });
    return { row, shown };
  });
  await deps.versions.bump(uid);
  return withSecret(deps.webhookBaseUrl, result.row, result.shown);
}

/** A webhook of the caller's team in the given factory; anything else is reported as missing. */
export async function loadWebhook(
  db: PrismaClient | Tx,
  caller: Caller,
  factoryId: string,
  uid: string,
): Promise<Webhook> {
  const row =
    uid && factoryId
      ? await db.webhook.findFirst({ where: { id: uid, factoryId, teamId: caller.team_id } })
      : null;
  if (!row) {
    // Distinguish a missing factory from a missing webhook only for the caller's own team.
    if (
      factoryId &&
      !(await db.factory.findFirst({
        where: { id: factoryId, teamId: caller.team_id },
        select: { id: true },
      }))
    ) {
      throw new AppError('resource_not_found', 'Factory not found');
    }
    throw notFound();
  }
  return row;
}

export async function listWebhooks(
  deps: Pick<WebhookDeps, 'db' | 'webhookBaseUrl'>,
  caller: Caller,
  factoryId: string,
): Promise<WebhookView[]> {
  await loadFactory(deps.db, caller, factoryId);
  const rows = await deps.db.webhook.findMany({
    where: { factoryId, teamId: caller.team_id },
    orderBy: [{ name: 'asc' }],
  });
  return rows.map((row) => viewWebhook(deps.webhookBaseUrl, row));
}

export async function getWebhook(
  deps: Pick<WebhookDeps, 'db' | 'webhookBaseUrl'>,
  caller: Caller,
  factoryId: string,
  uid: string,
): Promise<WebhookView> {
  return viewWebhook(deps.webhookBaseUrl, await loadWebhook(deps.db, caller, factoryId, uid));
}

/**
 * Disabling makes senders get 404 at once. Enabling re-reads the team secret the webhook names (that is how a new
 * managed-secret value takes effect), so a webhook that awaited its provider secret becomes active once the secret
 * exists; a value that no longer suits the mode (a url_token secret that is not URL-safe) refuses the enable.
 */
export async function setWebhookEnabled(
  deps: WebhookDeps,
  caller: Caller,
  factoryId: string,
  uid: string,
  enabled: boolean,
): Promise<WebhookView> {
  requireFactoryManager(caller, enabled ? 'Enabling a webhook' : 'Disabling a webhook');
  const row = await deps.db.$transaction(async (tx) => {
    const current = await loadWebhook(tx, caller, factoryId, uid);
    let credential: ReturnType<typeof credentialColumns> | undefined;
    if (enabled) {
      const value = await readTeamSecretValue(tx, deps.cipher, current.teamId, current.secretName);
      if (value !== undefined) {
        const problem = credentialProblem(current.authMode as AuthMode, current.signatureScheme, value);
        if (problem)
          throw new AppError(
            'invalid_request',
            `Cannot enable: team secret "${current.secretName}" ${problem}`,
          );
        credential = credentialColumns(deps.cipher, current.id, value);
      }
    }
    return tx.webhook.update({ where: { id: current.id }, data: { enabled, ...credential } });
  });
  await deps.versions.bump(uid);
  return viewWebhook(deps.webhookBaseUrl, row);
}

/** Senders get 404 at once; automations selecting the webhook stay but stop firing; its delivery log goes with it. */
export async function deleteWebhook(
  deps: WebhookDeps,
  caller: Caller,
  factoryId: string,
  uid: string,
): Promise<void> {
  requireFactoryManager(caller, 'Deleting a webhook');
  const row = await loadWebhook(deps.db, caller, factoryId, uid);
  await deps.db.webhook.delete({ where: { id: row.id } });
  await deps.versions.bump(uid);
}

/**
 * Token and url_token: a new generated secret. Signature: the provider's new signing secret when given (this is
 * also the second step of a webhook created without one), else a generated Standard Webhooks secret. The new value
 * goes to the webhook's team secret too, and the old one stops working with the next request.
 */
export async function rotateWebhookSecret(
  deps: WebhookDeps,
  caller: Caller,
  factoryId: string,
  uid: string,
  providerSecret = '',
): Promise<WebhookWithSecretView> {
  requireFactoryManager(caller, 'Rotating a webhook secret');
  const result = await deps.db.$transaction(async (tx) => {
    const current = await loadWebhook(tx, caller, factoryId, uid);
    const authMode = current.authMode as AuthMode;
    let credential: string;
    let shown: string | undefined;
    if (providerSecret) {
      if (authMode !== 'signature')
        throw new AppError(
          'invalid_request',
          'provider_secret applies to signature webhooks only; token and url_token secrets are generated',
        );
      validateSecretValue(providerSecret, 'provider_secret');
      const problem = credentialProblem(authMode, current.signatureScheme, providerSecret);
      if (problem) throw new AppError('invalid_request', `provider_secret ${problem}`);
      credential = providerSecret;
    } else if (generatesSecret(authMode, current.signatureScheme)) {
      credential = shown =
        authMode === 'signature' ? generateStandardWebhooksSecret() : generateWebhookSecret();
    } else {
      throw new AppError(
        'invalid_request',
        `A ${current.signatureScheme} webhook's secret is issued by the provider: send it as provider_secret`,
      );
    }
    await writeTeamSecret(tx, deps.cipher, {
      teamId: current.teamId,
      name: current.secretName,
      value: credential,
      createdById: caller.principal_id,
    });
    const row = await tx.webhook.update({
      where: { id: current.id },
      data: credentialColumns(deps.cipher, current.id, credential),
    });
    return { row, shown };
  });
  await deps.versions.bump(uid);
  return withSecret(deps.webhookBaseUrl, result.row, result.shown);
}
