import { randomBytes } from 'node:crypto';
import { bodyHmacSignature, GITHUB, LINEAR, SHOPIFY } from './body-hmac';
import { GITLAB_TOKEN_HEADER } from './gitlab';
import type { SignatureScheme } from './signature-scheme';
import { SLACK_SIGNATURE_HEADER, SLACK_TIMESTAMP_HEADER, slackSignature } from './slack';
import {
  standardWebhooksSignature,
  standardWebhooksSigningKey,
  type StandardWebhooksHeaderPrefix,
} from './standard-webhooks';
import { STRIPE_HEADER, stripeSignature } from './stripe';
import { unixSeconds } from './timestamp';

// Senders' side of each scheme, for tests and benchmarks: each returns the headers (lower-case names) to send.

export type SignedHeaders = Record<string, string>;

export interface SignInput {
  secret: string;
  body: Buffer | string;
}

export interface TimestampedSignInput extends SignInput {
  timestamp: Date;
}

export function signStandardWebhooks(
  input: TimestampedSignInput & { id: string; headerPrefix?: StandardWebhooksHeaderPrefix },
): SignedHeaders {
  const { secret, ...message } = input;
  return standardWebhooksHeaders({ ...message, keys: [standardWebhooksSigningKey(secret)] });
}

/**
 * The one Standard Webhooks signer, for the ingress's test senders and the orchestrator's outbound run events:
 * `{prefix}-id`, `{prefix}-timestamp` (the attempt's, in seconds) and `{prefix}-signature`, one `v1,<base64
 * HMAC-SHA256 of id.timestamp.body>` per key, space-separated (several while a rotated-out secret is still in its
 * grace period). Keys come from standardWebhooksSigningKey, decoded once. Node's native HMAC rather than the
 * standardwebhooks package's JavaScript SHA-256 (a measurable share of the dispatcher's CPU at thousands of attempts
 * a second); standard-webhooks.test.ts checks that package verifies what this signs.
 */
export function standardWebhooksHeaders(input: {
  id: string;
  timestamp: Date;
  body: Buffer | string;
  keys: readonly Buffer[];
  headerPrefix?: StandardWebhooksHeaderPrefix;
}): SignedHeaders {
  const { id, body, keys, headerPrefix = 'webhook' } = input;
  const t = String(unixSeconds(input.timestamp));
  const signatures = keys.map((key) => `v1,${standardWebhooksSignature(key, id, t, body)}`);
  return {
    [`${headerPrefix}-id`]: id,
    [`${headerPrefix}-timestamp`]: t,
    [`${headerPrefix}-signature`]: signatures.join(' '),
  };
}

export function signStripe({ secret, body, timestamp }: TimestampedSignInput): SignedHeaders {
  const t = String(unixSeconds(timestamp));
  return { [STRIPE_HEADER]: `t=${t},v1=${stripeSignature(secret, t, body)}` };
}

export function signGithub({ secret, body }: SignInput): SignedHeaders {
  return { [GITHUB.header]: bodyHmacSignature(GITHUB, secret, body) };
}

export function signSlack({ secret, body, timestamp }: TimestampedSignInput): SignedHeaders {
  const t = String(unixSeconds(timestamp));
  return { [SLACK_SIGNATURE_HEADER]: slackSignature(secret, t, body), [SLACK_TIMESTAMP_HEADER]: t };
}

/** Linear's freshness is the body's own `webhookTimestamp`, so put it in the body before signing when wanted. */
export function signLinear({ secret, body }: SignInput): SignedHeaders {
  return { [LINEAR.header]: bodyHmacSignature(LINEAR, secret, body) };
}

export function signShopify({ secret, body }: SignInput): SignedHeaders {
  return { [SHOPIFY.header]: bodyHmacSignature(SHOPIFY, secret, body) };
}

/** Signs for any scheme, e.g. to run one test or benchmark over all of them; `id` defaults to a random `msg_` id. */
export function signWebhook(
  scheme: SignatureScheme,
  { secret, body, now, id }: SignInput & { now: Date; id?: string },
): SignedHeaders {
  switch (scheme) {
    case 'standard-webhooks':
      return signStandardWebhooks({
        secret,
        body,
        timestamp: now,
        id: id ?? `msg_${randomBytes(12).toString('hex')}`,
      });
    case 'stripe':
      return signStripe({ secret, body, timestamp: now });
    case 'github':
      return signGithub({ secret, body });
    case 'gitlab':
      return { [GITLAB_TOKEN_HEADER]: secret };
    case 'slack':
      return signSlack({ secret, body, timestamp: now });
    case 'linear':
      return signLinear({ secret, body });
    case 'shopify':
      return signShopify({ secret, body });
  }
}
