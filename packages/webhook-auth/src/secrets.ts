import { randomBytes } from 'node:crypto';

const URL_SAFE_SECRET = /^[A-Za-z0-9_-]{16,}$/;

/** A secret for `token` and `url_token` webhooks: 32 random bytes, base64url, so it fits a URL path segment. */
export function generateWebhookSecret(): string {
  return randomBytes(32).toString('base64url');
}

/** A Standard Webhooks signing secret (`whsec_` + the base64 of 32 random bytes): for senders whose provider secret
 * was left blank, and for the outbound events of a team's event endpoints. */
export function generateStandardWebhooksSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** Whether `secret` may be used as a `url_token` path segment: only `[A-Za-z0-9_-]`, at least 16 characters. */
export function isUrlSafeSecret(secret: string): boolean {
  return URL_SAFE_SECRET.test(secret);
}
