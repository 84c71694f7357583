import { createHash } from 'node:crypto';
import { providerDeliveryId, type SignatureScheme, type WebhookHeaders } from '@conveyor/webhook-auth';
import type { DeliveryMessage } from '@conveyor/kafka';

export type IdentitySource = Exclude<DeliveryMessage['identitySource'], 'none'>;

/** The sender's own delivery header, option (c) of the identity order. */
export const SERVICE_DELIVERY_ID_HEADER = 'x-service-delivery-id';

/**
 * A usable delivery ID: 1-200 visible ASCII characters (no spaces), so it fits a Redis key, a run's metadata value
 * and a log line unchanged. A header whose value is not usable (or that was sent twice) is skipped and the next
 * source in the order is tried.
 */
const USABLE_ID = /^[\x21-\x7e]{1,200}$/;

export interface IdentityInput {
  headers: WebhookHeaders;
  /** The webhook's delivery-ID header setting (lower case), if any. */
  configuredHeader?: string | undefined;
  /** Signature webhooks only: the provider scheme, whose own delivery header (or body field) comes second. */
  scheme?: SignatureScheme | undefined;
  parsedBody: unknown;
  rawBody: Buffer;
}

function singleHeader(headers: WebhookHeaders, name: string): string | undefined {
  let found: string | undefined;
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() !== name || value === undefined) continue;
    if (found !== undefined || typeof value !== 'string') return undefined; // duplicated
    found = value;
  }
  return found !== undefined && USABLE_ID.test(found) ? found : undefined;
}

/** Hex SHA-256 of the raw body: identical bodies without any delivery ID count as the same delivery. */
export function bodyHash(rawBody: Buffer): string {
  return createHash('sha256').update(rawBody).digest('hex');
}

/**
 * Delivery identity in the contract's order of preference: (a) the configured header, (b) the provider's own
 * delivery ID for signed webhooks, (c) X-Service-Delivery-Id, (d) a hash of the body.
 */
export function deliveryIdentity(input: IdentityInput): { id: string; source: IdentitySource } {
  if (input.configuredHeader) {
    const id = singleHeader(input.headers, input.configuredHeader.toLowerCase());
    if (id) return { id, source: 'configured_header' };
  }
  if (input.scheme) {
    const id = providerDeliveryId(input.scheme, input.headers, input.parsedBody);
    if (id !== undefined && USABLE_ID.test(id)) return { id, source: 'provider_header' };
  }
  const service = singleHeader(input.headers, SERVICE_DELIVERY_ID_HEADER);
  if (service) return { id: service, source: 'service_header' };
  return { id: bodyHash(input.rawBody), source: 'body_hash' };
}
