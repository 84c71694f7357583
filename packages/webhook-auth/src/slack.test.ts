import { signSlack } from './sign';
import type { WebhookHeaders } from './types';
import { verifySignature } from './verify-signature';

// Slack's documentation vector, with now pinned to the request's timestamp.
const SECRET = '8f742231b10e8888abcd99yyyzzz85a5';
const TIMESTAMP = 1531420618;
const NOW = new Date(TIMESTAMP * 1000);
const BODY = Buffer.from(
  'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c',
);
const SIGNATURE = 'v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503';

const headers = (overrides: WebhookHeaders = {}): WebhookHeaders => ({
  'x-slack-signature': SIGNATURE,
  'x-slack-request-timestamp': String(TIMESTAMP),
  ...overrides,
});
const verify = (h: WebhookHeaders, options: { secret?: string; body?: Buffer; now?: Date } = {}) =>
  verifySignature({
    scheme: 'slack',
    secret: options.secret ?? SECRET,
    headers: h,
    rawBody: options.body ?? BODY,
    now: options.now ?? NOW,
  });

describe('slack', () => {
  it('accepts the published vector and signs it identically', () => {
    expect(verify(headers())).toEqual({ ok: true });
    expect(signSlack({ secret: SECRET, body: BODY, timestamp: NOW })).toEqual(headers());
  });

  it('rejects a request more than five minutes away from now', () => {
    const at = (offset: number) => new Date((TIMESTAMP + offset) * 1000);
    expect(verify(headers(), { now: at(300) })).toEqual({ ok: true });
    expect(verify(headers(), { now: at(301) })).toEqual({ ok: false, reason: 'timestamp too old' });
    expect(verify(headers(), { now: at(-301) })).toEqual({
      ok: false,
      reason: 'timestamp too far in the future',
    });
  });

  it('rejects a wrong secret, a tampered body, a signature over another timestamp', () => {
    expect(verify(headers(), { secret: SECRET.replace('8f', '9f') })).toEqual({
      ok: false,
      reason: 'signature mismatch',
    });
    expect(verify(headers(), { body: Buffer.from(BODY.toString().replace('foobar', 'foobaz')) }).ok).toBe(
      false,
    );
    expect(verify(headers({ 'x-slack-request-timestamp': String(TIMESTAMP + 1) })).ok).toBe(false);
  });

  it.each([
    ['a missing signature', { 'x-slack-signature': undefined }, 'missing header x-slack-signature'],
    [
      'a missing timestamp',
      { 'x-slack-request-timestamp': undefined },
      'missing header x-slack-request-timestamp',
    ],
    [
      'a timestamp that is not an integer',
      { 'x-slack-request-timestamp': 'hello' },
      'malformed header x-slack-request-timestamp',
    ],
    [
      'another version',
      { 'x-slack-signature': SIGNATURE.replace('v0=', 'v1=') },
      'malformed header x-slack-signature',
    ],
    ['a truncated signature', { 'x-slack-signature': SIGNATURE.slice(0, 20) }, 'signature mismatch'],
    [
      'a duplicated signature',
      { 'x-slack-signature': [SIGNATURE, SIGNATURE] },
      'duplicated header x-slack-signature',
    ],
  ])('rejects %s', (_name, overrides, reason) => {
    expect(verify(headers(overrides))).toEqual({ ok: false, reason });
  });
});
