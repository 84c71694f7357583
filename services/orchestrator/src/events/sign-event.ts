import { Webhook } from 'standardwebhooks';

/**
 * The Standard Webhooks headers of one attempt: `webhook-id` is the event's (the same on every retry and replay),
 * `webhook-timestamp` the attempt's, and `webhook-signature` one `v1,<base64 HMAC-SHA256>` of `id.timestamp.body`
 * per signing secret, space-separated (two while a rotated-out secret is in its grace period). The standardwebhooks
 * package signs, so receivers verifying with any Standard Webhooks library agree with us by construction.
 */
export function signEvent(
  eventId: string,
  body: string,
  secrets: readonly string[],
  at: Date,
): Record<string, string> {
  const signatures = secrets.map((secret) => new Webhook(secret).sign(eventId, at, body));
  return {
    'webhook-id': eventId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': signatures.join(' '),
  };
}
