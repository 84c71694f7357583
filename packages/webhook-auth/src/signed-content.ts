import { createHash } from 'node:crypto';
import { readHeader } from './headers';
import type { SignatureScheme } from './signature-scheme';
import { SLACK_TIMESTAMP_HEADER, slackSignedMessage } from './slack';
import { standardWebhooksHeaderPrefix, standardWebhooksSignedMessage } from './standard-webhooks';
import { parseStripeHeader, STRIPE_HEADER, stripeSignedMessage } from './stripe';
import type { WebhookHeaders } from './types';

type SignedMessage = (headers: WebhookHeaders, rawBody: Buffer) => Array<string | Buffer> | undefined;

const header = (headers: WebhookHeaders, name: string): string | undefined => {
  const read = readHeader(headers, name);
  return read.ok ? read.value : undefined;
};

/**
 * Exactly the bytes each scheme's MAC covers, nothing the sender of a copy could change without breaking the
 * signature: no delivery header, no extra signature entries. GitLab signs nothing (its header is the secret itself).
 */
const SIGNED_MESSAGES: Record<SignatureScheme, SignedMessage> = {
  github: (_headers, body) => [body],
  shopify: (_headers, body) => [body],
  // `webhookTimestamp`, when present, is inside the body.
  linear: (_headers, body) => [body],
  stripe: (headers, body) => {
    const value = header(headers, STRIPE_HEADER);
    const parsed = value === undefined ? undefined : parseStripeHeader(value);
    return parsed?.ok ? stripeSignedMessage(parsed.timestamp, body) : undefined;
  },
  slack: (headers, body) => {
    const timestamp = header(headers, SLACK_TIMESTAMP_HEADER);
    return timestamp === undefined ? undefined : slackSignedMessage(timestamp, body);
  },
  'standard-webhooks': (headers, body) => {
    const prefix = standardWebhooksHeaderPrefix(headers);
    const id = header(headers, `${prefix}-id`);
    const timestamp = header(headers, `${prefix}-timestamp`);
    return id === undefined || timestamp === undefined
      ? undefined
      : standardWebhooksSignedMessage(id, timestamp, body);
  },
  gitlab: () => undefined,
};

/**
 * The hex SHA-256 of what the delivery's signature covers, for a delivery `verifySignature` accepted: two deliveries
 * with the same digest are one signed message sent twice, whatever their unsigned delivery headers say, so the
 * second is a replay. Undefined for GitLab, whose deliveries carry no signature to replay.
 */
export function signedContentDigest(
  scheme: SignatureScheme,
  headers: WebhookHeaders,
  rawBody: Buffer,
): string | undefined {
  const parts = SIGNED_MESSAGES[scheme](headers, rawBody);
  if (parts === undefined) return undefined;
  const hash = createHash('sha256').update(scheme).update('\0');
  for (const part of parts) hash.update(part);
  return hash.digest('hex');
}
