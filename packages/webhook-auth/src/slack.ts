import { readHeader } from './headers';
import { hmacSha256, secretsEqual } from './hmac';
import { checkTimestamp, parseUnixSeconds, unixSeconds } from './timestamp';
import { fail, OK, type SchemeVerifyInput, type VerifyResult } from './types';

export const SLACK_SIGNATURE_HEADER = 'x-slack-signature';
export const SLACK_TIMESTAMP_HEADER = 'x-slack-request-timestamp';
const VERSION = 'v0';
const TOLERANCE_SECONDS = 5 * 60;

/** What a Slack signature covers: `v0:{timestamp}:{body}`. */
export function slackSignedMessage(timestamp: string, body: Buffer | string): Array<string | Buffer> {
  return [VERSION, ':', timestamp, ':', body];
}

/** `v0=` + the hex MAC of the signed message, as the header carries it. */
export function slackSignature(secret: string, timestamp: string, body: Buffer | string): string {
  return `${VERSION}=${hmacSha256(secret, slackSignedMessage(timestamp, body)).toString('hex')}`;
}

export function verifySlack({ secret, headers, rawBody, now }: SchemeVerifyInput): VerifyResult {
  const signature = readHeader(headers, SLACK_SIGNATURE_HEADER);
  if (!signature.ok) return signature;
  const timestampHeader = readHeader(headers, SLACK_TIMESTAMP_HEADER);
  if (!timestampHeader.ok) return timestampHeader;

  const timestamp = parseUnixSeconds(timestampHeader.value);
  if (timestamp === undefined) return fail(`malformed header ${SLACK_TIMESTAMP_HEADER}`);
  const fresh = checkTimestamp(timestamp, unixSeconds(now), TOLERANCE_SECONDS);
  if (!fresh.ok) return fresh;

  if (!signature.value.startsWith(`${VERSION}=`)) return fail(`malformed header ${SLACK_SIGNATURE_HEADER}`);
  return secretsEqual(slackSignature(secret, timestampHeader.value, rawBody), signature.value)
    ? OK
    : fail('signature mismatch');
}
