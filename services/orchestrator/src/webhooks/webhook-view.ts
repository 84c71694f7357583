import type { Webhook } from '@conveyor/db';
import { ingressUrl } from './webhook-rules';

export interface WebhookView {
  row: Webhook;
  url: string;
  secretStatus: 'active' | 'awaiting_provider_secret';
  managedBy: 'api' | 'definition';
}

export interface WebhookWithSecretView {
  webhook: WebhookView;
  /** Only when the platform generated it: shown once. */
  secret?: string;
  /** The URL for the sender; contains the secret in url_token mode when the secret is shown. */
  ingressUrl: string;
}

export function viewWebhook(webhookBaseUrl: string, row: Webhook): WebhookView {
  return {
    row,
    url: ingressUrl(webhookBaseUrl, row.id, row.authMode),
    secretStatus: row.secretCiphertext ? 'active' : 'awaiting_provider_secret',
    managedBy: row.definitionName ? 'definition' : 'api',
  };
}

export function withSecret(
  webhookBaseUrl: string,
  row: Webhook,
  shown: string | undefined,
): WebhookWithSecretView {
  return {
    webhook: viewWebhook(webhookBaseUrl, row),
    ...(shown !== undefined && { secret: shown }),
    ingressUrl: ingressUrl(webhookBaseUrl, row.id, row.authMode, shown),
  };
}
