import { createHmac } from 'node:crypto';

/** The HMAC key of a `whsec_…` secret (Standard Webhooks: the base64 after the prefix); decode once, sign many. */
export const signingKey = (secret: string): Buffer =>
  Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');

/**
 * The Standard Webhooks headers of one attempt: `webhook-id` is the event's (the same on every retry and replay),
 * `webhook-timestamp` the attempt's, and `webhook-signature` one `v1,<base64 HMAC-SHA256>` of `id.timestamp.body`
 * per signing key, space-separated (two while a rotated-out secret is in its grace period). node's native HMAC rather
 * than the standardwebhooks package's JavaScript SHA-256 (a measurable share of the dispatcher's CPU at thousands of
 * attempts a second); sign-event.test.ts checks that package verifies what this signs.
 */
export function signEvent(
  eventId: string,
  body: string,
  keys: readonly Buffer[],
  at: Date,
): Record<string, string> {
  const timestamp = String(Math.floor(at.getTime() / 1000));
  const signatures = keys.map(
    (key) => `v1,${createHmac('sha256', key).update(`${eventId}.${timestamp}.${body}`).digest('base64')}`,
  );
  return { 'webhook-id': eventId, 'webhook-timestamp': timestamp, 'webhook-signature': signatures.join(' ') };
}
