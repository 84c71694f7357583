import { AppError } from '@conveyor/errors';
import { Prisma } from '@conveyor/db';
import type { SignatureScheme } from '@conveyor/webhook-auth';
import type { Caller } from '../auth/caller';
import { createWebhook, type WebhookDeps } from '../webhooks/manage-webhooks';

/**
 * Creates the signature webhook an integration receives its provider's deliveries on (the provider's signing secret
 * becomes the webhook's provider secret, a team secret like any webhook's), then the integration's row with it. The
 * webhook was only for the integration: if the row cannot be written, the webhook goes again.
 */
export async function withIntegrationWebhook<T>(
  deps: WebhookDeps,
  caller: Caller,
  webhook: { factoryId: string; name: string; scheme: SignatureScheme; secret: string; conflict: string },
  create: (webhookId: string) => Promise<T>,
): Promise<T> {
  const created = await createWebhook(deps, caller, webhook.factoryId, {
    name: webhook.name,
    authMode: 'signature',
    signatureScheme: webhook.scheme,
    providerSecret: webhook.secret,
  });
  try {
    return await create(created.webhook.row.id);
  } catch (err) {
    await removeIntegrationWebhook(deps, created.webhook.row.id);
    if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002')
      throw new AppError('conflict', webhook.conflict);
    throw err;
  }
}

/** Removes an integration's webhook (and with it the integration): senders get 404 at once. */
export async function removeIntegrationWebhook(deps: WebhookDeps, webhookId: string): Promise<void> {
  await deps.db.webhook.delete({ where: { id: webhookId } });
  await deps.versions.bump(webhookId);
}

/** The creator of an integration acts for it, as an automation's creator does for the automation. */
export const integrationCaller = (row: { teamId: string; createdById: string | null }): Caller => ({
  team_id: row.teamId,
  principal_type: 'USER',
  principal_id: row.createdById ?? '',
  role: 'ADMIN',
  api_key_id: '',
  run_id: '',
  display_name: '',
  email: '',
});
