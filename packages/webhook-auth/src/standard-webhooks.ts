import { hasHeader, readHeader } from './headers';
import { hmacSha256, secretsEqual } from './hmac';
import { checkTimestamp, parseUnixSeconds, unixSeconds } from './timestamp';
import { fail, OK, type SchemeVerifyInput, type VerifyResult, type WebhookHeaders } from './types';

const SECRET_PREFIX = 'whsec_';
const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;
const TOLERANCE_SECONDS = 5 * 60;

export type StandardWebhooksHeaderPrefix = 'webhook' | 'svix';

/** Svix senders use the same three headers with `svix-` instead of `webhook-`; one set is read, never a mix. */
export function standardWebhooksHeaderPrefix(headers: WebhookHeaders): StandardWebhooksHeaderPrefix {
  return !hasHeader(headers, 'webhook-signature') && hasHeader(headers, 'svix-signature')
    ? 'svix'
    : 'webhook';
}

/** The HMAC key: the base64 after the optional `whsec_` prefix, decoded. Undefined when it is not base64. */
export function standardWebhooksKey(secret: string): Buffer | undefined {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  if (!BASE64.test(encoded)) return undefined;
  const key = Buffer.from(encoded, 'base64');
  return key.length > 0 ? key : undefined;
}

/** The HMAC key of a secret this installation signs with: decode once, sign many. Throws when it is not base64. */
export function standardWebhooksSigningKey(secret: string): Buffer {
  const key = standardWebhooksKey(secret);
  if (key === undefined)
    throw new Error('Standard Webhooks secret is not base64 (optionally prefixed with whsec_)');
  return key;
}

/** The base64 MAC of `{id}.{timestamp}.{body}`, without the `v1,` version tag. */
export function standardWebhooksSignature(
  key: Buffer,
  id: string,
  timestamp: string,
  body: Buffer | string,
): string {
  return hmacSha256(key, standardWebhooksSignedMessage(id, timestamp, body)).toString('base64');
}

/** What a Standard Webhooks signature covers: `{id}.{timestamp}.{body}`. */
export function standardWebhooksSignedMessage(
  id: string,
  timestamp: string,
  body: Buffer | string,
): Array<string | Buffer> {
  return [id, '.', timestamp, '.', body];
}

export function verifyStandardWebhooks({ secret, headers, rawBody, now }: SchemeVerifyInput): VerifyResult {
  const prefix = standardWebhooksHeaderPrefix(headers);
  const id = readHeader(headers, `${prefix}-id`);
  if (!id.ok) return id;
  const timestampHeader = readHeader(headers, `${prefix}-timestamp`);
  if (!timestampHeader.ok) return timestampHeader;
  const signatureHeader = readHeader(headers, `${prefix}-signature`);
  if (!signatureHeader.ok) return signatureHeader;

  const timestamp = parseUnixSeconds(timestampHeader.value);
  if (timestamp === undefined) return fail(`malformed header ${prefix}-timestamp`);
  const fresh = checkTimestamp(timestamp, unixSeconds(now), TOLERANCE_SECONDS);
  if (!fresh.ok) return fresh;

  const key = standardWebhooksKey(secret);
  if (key === undefined) return fail('secret is not base64 (optionally prefixed with whsec_)');

  // A space-separated list of `version,signature`; only v1 entries count, others are ignored.
  const candidates = signatureHeader.value
    .split(' ')
    .filter((entry) => entry.startsWith('v1,'))
    .map((entry) => entry.slice('v1,'.length));
  if (candidates.length === 0) return fail(`no v1 signature in header ${prefix}-signature`);
  const expected = standardWebhooksSignature(key, id.value, timestampHeader.value, rawBody);
  return candidates.some((candidate) => secretsEqual(expected, candidate)) ? OK : fail('signature mismatch');
}
