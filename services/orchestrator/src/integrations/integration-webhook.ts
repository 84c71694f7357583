import { AppError } from '@conveyor/errors';
import { Prisma } from '@conveyor/db';
import type { Caller } from '../auth/caller';
import { createWebhook, type WebhookDeps } from '../webhooks/manage-webhooks';

/** An integration's deliveries arrive on an ordinary signature webhook of one of the team's factories. */
export interface IntegrationWebhook {
  factoryId: string;
  name: string;
  signatureScheme: string;
  /** The provider's secret (a GitHub App's webhook secret, a Slack app's signing secret): a team secret, like any webhook's. */
  providerSecret: string;
  /** The webhook's ID when it was chosen beforehand (a GitHub App manifest named its URL). */
  id?: string;
}

/**
 * Creates the integration's webhook, then the integration's row with it; when the row cannot be written the webhook,
 * which was only for it, goes again. A unique violation (the name taken meanwhile) is the `conflict` given.
 */
export async function createWithWebhook<T>(
  deps: WebhookDeps,
  caller: Caller,
  webhook: IntegrationWebhook,
  conflict: string,
  create: (webhookId: string) => Promise<T>,
): Promise<T> {
  const { webhook: created } = await createWebhook(deps, caller, webhook.factoryId, {
    name: webhook.name,
    authMode: 'signature',
    signatureScheme: webhook.signatureScheme,
    providerSecret: webhook.providerSecret,
    ...(webhook.id ? { id: webhook.id } : {}),
  });
  try {
    return await create(created.row.id);
  } catch (err) {
    await removeIntegrationWebhook(deps, created.row.id);
    if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002')
      throw new AppError('conflict', conflict);
    throw err;
  }
}

/** Removes an integration's webhook (senders get 404 at once, the integration's row goes with it). */
export async function removeIntegrationWebhook(deps: WebhookDeps, webhookId: string): Promise<void> {
  await deps.db.webhook.delete({ where: { id: webhookId } });
  await deps.versions.bump(webhookId);
}
