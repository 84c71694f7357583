import { LINEAR, verifyBodyHmac } from './body-hmac';
import { checkTimestamp } from './timestamp';
import { fail, OK, type SchemeVerifyInput, type VerifyResult } from './types';

const TOLERANCE_MS = 60 * 1000;

/**
 * Linear signs the raw body; its freshness lives in the body field `webhookTimestamp` (Unix milliseconds),
 * checked only after the signature proves the body authentic, and only when present.
 */
export function verifyLinear({ secret, headers, rawBody, now }: SchemeVerifyInput): VerifyResult {
  const signed = verifyBodyHmac(LINEAR, secret, headers, rawBody);
  if (!signed.ok) return signed;
  const timestamp = webhookTimestamp(rawBody);
  if (timestamp === undefined) return OK;
  if (typeof timestamp !== 'number') return fail('malformed webhookTimestamp');
  return checkTimestamp(timestamp, now.getTime(), TOLERANCE_MS);
}

/** The body's `webhookTimestamp`, undefined when the body is not a JSON object or lacks it. */
function webhookTimestamp(rawBody: Buffer): unknown {
  let body: unknown;
  try {
    body = JSON.parse(rawBody.toString('utf8'));
  } catch {
    // Not JSON: nothing to check here; the ingress rejects the body as invalid JSON after authentication.
    return undefined;
  }
  return typeof body === 'object' && body !== null && Object.hasOwn(body, 'webhookTimestamp')
    ? (body as Record<string, unknown>)['webhookTimestamp']
    : undefined;
}
