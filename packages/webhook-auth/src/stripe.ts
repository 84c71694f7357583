import { readHeader } from './headers';
import { hmacSha256, secretsEqual } from './hmac';
import { checkTimestamp, parseUnixSeconds, unixSeconds } from './timestamp';
import { fail, OK, type SchemeVerifyInput, type VerifyResult } from './types';

export const STRIPE_HEADER = 'stripe-signature';
const TOLERANCE_SECONDS = 5 * 60;

/**
 * The hex MAC of `{t}.{body}`. The key is the secret string as given, `whsec_` included and not base64-decoded:
 * the same secret derives a different key under Standard Webhooks.
 */
export function stripeSignature(secret: string, timestamp: string, body: Buffer | string): string {
  return hmacSha256(secret, stripeSignedMessage(timestamp, body)).toString('hex');
}

/** What a Stripe signature covers: `{t}.{body}`. */
export function stripeSignedMessage(timestamp: string, body: Buffer | string): Array<string | Buffer> {
  return [timestamp, '.', body];
}

type ParsedStripeHeader =
  { ok: true; timestamp: string; signatures: string[] } | { ok: false; reason: string };

/** `t=<unix>,v1=<hex>[,v1=<hex>...]`; other schemes (v0) are ignored, a repeated or missing `t` is malformed. */
export function parseStripeHeader(value: string): ParsedStripeHeader {
  const malformed = { ok: false, reason: `malformed header ${STRIPE_HEADER}` } as const;
  let timestamp: string | undefined;
  const signatures: string[] = [];
  for (const item of value.split(',')) {
    const eq = item.indexOf('=');
    if (eq <= 0) return malformed;
    const key = item.slice(0, eq);
    const val = item.slice(eq + 1);
    if (key === 't') {
      if (timestamp !== undefined) return malformed;
      timestamp = val;
    } else if (key === 'v1') {
      signatures.push(val);
    }
  }
  if (timestamp === undefined) return malformed;
  return { ok: true, timestamp, signatures };
}

export function verifyStripe({ secret, headers, rawBody, now }: SchemeVerifyInput): VerifyResult {
  const header = readHeader(headers, STRIPE_HEADER);
  if (!header.ok) return header;
  const parsed = parseStripeHeader(header.value);
  if (!parsed.ok) return parsed;

  const timestamp = parseUnixSeconds(parsed.timestamp);
  if (timestamp === undefined) return fail(`malformed header ${STRIPE_HEADER}`);
  // Stripe's table only bounds the age; the future bound is ours, so a skewed or forged `t` can't extend the window.
  const fresh = checkTimestamp(timestamp, unixSeconds(now), TOLERANCE_SECONDS);
  if (!fresh.ok) return fresh;

  if (parsed.signatures.length === 0) return fail(`no v1 signature in header ${STRIPE_HEADER}`);
  const expected = stripeSignature(secret, parsed.timestamp, rawBody);
  return parsed.signatures.some((candidate) => secretsEqual(expected, candidate))
    ? OK
    : fail('signature mismatch');
}
