import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Time-limited links to a blob. The token is the whole credential (no API key):
 * `<base64url(key)>.<expiry, unix seconds>.<base64url(HMAC-SHA256(secret, "<key>\n<expiry>"))>`.
 * Changing any part, or using it after the expiry, makes it invalid.
 */
/** The longest a signed link may live (config validation caps the TTL; verification refuses anything longer). */
export const MAX_SIGNED_LINK_TTL_SECONDS = 3600;

export type BlobTokenCheck =
  | { ok: true; key: string; expiresAt: Date }
  | { ok: false; reason: 'malformed' | 'bad_signature' | 'expired' };

function signature(key: string, expiresAtSeconds: number, secret: string): Buffer {
  return createHmac('sha256', secret).update(`${key}\n${expiresAtSeconds}`).digest();
}

export function signBlobToken(key: string, expiresAt: Date, secret: string): string {
  const exp = Math.floor(expiresAt.getTime() / 1000);
  return `${Buffer.from(key, 'utf8').toString('base64url')}.${exp}.${signature(key, exp, secret).toString('base64url')}`;
}

/** `<baseUrl>/blobs/<token>`; baseUrl is the public API base ending in `/v1`. */
export function signBlobUrl(baseUrl: string, key: string, expiresAt: Date, secret: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/blobs/${signBlobToken(key, expiresAt, secret)}`;
}

const B64URL = /^[A-Za-z0-9_-]+$/;

/**
 * Expected failures are results, not throws: a bad link is an everyday event. `secrets` is the current signing
 * secret, optionally followed by earlier ones still accepted while links signed with them live out their TTL.
 */
export function verifyBlobToken(
  token: string,
  secrets: string | readonly string[],
  now: Date,
): BlobTokenCheck {
  const parts = token.split('.');
  if (parts.length !== 3) return { ok: false, reason: 'malformed' };
  const [encodedKey, expText, sigText] = parts as [string, string, string];
  if (!B64URL.test(encodedKey) || !/^\d{1,12}$/.test(expText) || !B64URL.test(sigText))
    return { ok: false, reason: 'malformed' };
  const key = Buffer.from(encodedKey, 'base64url').toString('utf8');
  // Reject non-canonical encodings so one link has exactly one spelling.
  if (Buffer.from(key, 'utf8').toString('base64url') !== encodedKey)
    return { ok: false, reason: 'malformed' };
  const exp = Number(expText);
  const given = Buffer.from(sigText, 'base64url');
  const signedWith = (secret: string): boolean => {
    const expected = signature(key, exp, secret);
    return given.length === expected.length && timingSafeEqual(given, expected);
  };
  if (!(typeof secrets === 'string' ? [secrets] : secrets).some(signedWith))
    return { ok: false, reason: 'bad_signature' };
  if (now.getTime() >= exp * 1000) return { ok: false, reason: 'expired' };
  // A validly signed link living longer than the cap was not minted by this configuration.
  if (exp * 1000 - now.getTime() > MAX_SIGNED_LINK_TTL_SECONDS * 1000)
    return { ok: false, reason: 'malformed' };
  return { ok: true, key, expiresAt: new Date(exp * 1000) };
}
