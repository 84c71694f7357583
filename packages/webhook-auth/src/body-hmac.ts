import { readHeader } from './headers';
import { hmacSha256, secretsEqual } from './hmac';
import { fail, OK, type VerifyResult, type WebhookHeaders } from './types';

/** A scheme whose header carries the HMAC-SHA256 of the raw body alone, keyed with the secret string. */
export interface BodyHmacScheme {
  header: string;
  /** Text before the encoded MAC in the header value, e.g. `sha256=`. */
  prefix: string;
  encoding: 'hex' | 'base64';
}

export const GITHUB: BodyHmacScheme = { header: 'x-hub-signature-256', prefix: 'sha256=', encoding: 'hex' };
export const LINEAR: BodyHmacScheme = { header: 'linear-signature', prefix: '', encoding: 'hex' };
export const SHOPIFY: BodyHmacScheme = { header: 'x-shopify-hmac-sha256', prefix: '', encoding: 'base64' };

/** The header value a sender of `scheme` puts on `body`. */
export function bodyHmacSignature(scheme: BodyHmacScheme, secret: string, body: Buffer | string): string {
  return scheme.prefix + hmacSha256(secret, [body]).toString(scheme.encoding);
}

export function verifyBodyHmac(
  scheme: BodyHmacScheme,
  secret: string,
  headers: WebhookHeaders,
  rawBody: Buffer,
): VerifyResult {
  const header = readHeader(headers, scheme.header);
  if (!header.ok) return header;
  if (!header.value.startsWith(scheme.prefix)) return fail(`malformed header ${scheme.header}`);
  return secretsEqual(bodyHmacSignature(scheme, secret, rawBody), header.value)
    ? OK
    : fail('signature mismatch');
}
