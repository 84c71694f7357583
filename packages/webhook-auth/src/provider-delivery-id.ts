import { readHeader } from './headers';
import type { SignatureScheme } from './signature-scheme';
import { standardWebhooksHeaderPrefix } from './standard-webhooks';
import type { WebhookHeaders } from './types';

type DeliveryIdSource = (headers: WebhookHeaders, parsedBody: unknown) => string | undefined;

const SOURCES: Record<SignatureScheme, DeliveryIdSource> = {
  'standard-webhooks': (headers) => firstHeader(headers, [`${standardWebhooksHeaderPrefix(headers)}-id`]),
  // Stripe sends no delivery header; the event id is the same on every retry of the event.
  stripe: (_headers, body) => {
    const id = bodyField(body, 'id');
    return typeof id === 'string' && id.startsWith('evt_') ? id : undefined;
  },
  github: (headers) => firstHeader(headers, ['x-github-delivery']),
  // Idempotency-Key is the one GitLab documents as stable across retries.
  gitlab: (headers) => firstHeader(headers, ['idempotency-key', 'x-gitlab-event-uuid']),
  // Only Events API callbacks carry event_id; slash commands and interactivity have no stable identity.
  slack: (_headers, body) => {
    const id = bodyField(body, 'event_id');
    return typeof id === 'string' && id !== '' ? id : undefined;
  },
  linear: (headers) => firstHeader(headers, ['linear-delivery']),
  shopify: (headers) => firstHeader(headers, ['x-shopify-webhook-id']),
};

/**
 * The provider's own delivery identity (option (b) of the ingress's delivery-identity order), or undefined when
 * the provider sent none: header missing, empty or duplicated, or no usable body field. Stripe and Slack carry it
 * in the body, so pass the parsed body for them.
 */
export function providerDeliveryId(
  scheme: SignatureScheme,
  headers: WebhookHeaders,
  parsedBody?: unknown,
): string | undefined {
  return SOURCES[scheme](headers, parsedBody);
}

function firstHeader(headers: WebhookHeaders, names: readonly string[]): string | undefined {
  for (const name of names) {
    const read = readHeader(headers, name);
    if (read.ok) return read.value;
  }
  return undefined;
}

function bodyField(body: unknown, key: string): unknown {
  return typeof body === 'object' && body !== null && !Array.isArray(body) && Object.hasOwn(body, key)
    ? (body as Record<string, unknown>)[key]
    : undefined;
}
