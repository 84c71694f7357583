import { randomBytes } from 'node:crypto';
import { bodyHmacSignature, GITHUB, LINEAR, SHOPIFY } from './body-hmac';
import { GITLAB_TOKEN_HEADER } from './gitlab';
import type { SignatureScheme } from './signature-scheme';
import { SLACK_SIGNATURE_HEADER, SLACK_TIMESTAMP_HEADER, slackSignature } from './slack';
import {
  standardWebhooksKey,
  standardWebhooksSignature,
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
  const { secret, body, timestamp, id, headerPrefix = 'webhook' } = input;
  const key = standardWebhooksKey(secret);
  if (key === undefined)
    throw new Error('Standard Webhooks secret is not base64 (optionally prefixed with whsec_)');
  const t = String(unixSeconds(timestamp));
  return {
    [`${headerPrefix}-id`]: id,
    [`${headerPrefix}-timestamp`]: t,
    [`${headerPrefix}-signature`]: `v1,${standardWebhooksSignature(key, id, t, body)}`,
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
