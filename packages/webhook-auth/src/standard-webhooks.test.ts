import { Webhook } from 'standardwebhooks';
import { generateStandardWebhooksSecret } from './secrets';
import { signStandardWebhooks, standardWebhooksHeaders } from './sign';
import { standardWebhooksSigningKey } from './standard-webhooks';
import type { WebhookHeaders } from './types';
import { verifySignature } from './verify-signature';

// The reference JavaScript library's published vector and negative cases.
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const ID = 'msg_p5jXN8AQM9LWM0D4loKWxJek';
const TIMESTAMP = 1614265330;
const BODY = Buffer.from('{"test": 2432232314}');
const SIGNATURE = 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=';
const NOW = new Date(TIMESTAMP * 1000);

const headers = (overrides: WebhookHeaders = {}, prefix = 'webhook'): WebhookHeaders => ({
  [`${prefix}-id`]: ID,
  [`${prefix}-timestamp`]: String(TIMESTAMP),
  [`${prefix}-signature`]: SIGNATURE,
  ...overrides,
});

const verify = (h: WebhookHeaders, options: { secret?: string; now?: Date; body?: Buffer } = {}) =>
  verifySignature({
    scheme: 'standard-webhooks',
    secret: options.secret ?? SECRET,
    headers: h,
    rawBody: options.body ?? BODY,
    now: options.now ?? NOW,
  });

describe('standard-webhooks', () => {
  it('accepts the published vector', () => {
    expect(verify(headers())).toEqual({ ok: true });
  });

  it('accepts the secret without the whsec_ prefix', () => {
    expect(verify(headers(), { secret: SECRET.slice('whsec_'.length) })).toEqual({ ok: true });
  });

  it('accepts svix-prefixed headers', () => {
    expect(verify(headers({}, 'svix'))).toEqual({ ok: true });
  });

  it('accepts header names in any case', () => {
    expect(
      verify({ 'Webhook-Id': ID, 'WEBHOOK-TIMESTAMP': String(TIMESTAMP), 'webhook-Signature': SIGNATURE }),
    ).toEqual({ ok: true });
  });

  it('signs exactly the published vector', () => {
    const signed = signStandardWebhooks({ secret: SECRET, id: ID, timestamp: NOW, body: BODY });
    expect(signed).toEqual(headers());
    expect(
      signStandardWebhooks({ secret: SECRET, id: ID, timestamp: NOW, body: BODY, headerPrefix: 'svix' }),
    ).toEqual(headers({}, 'svix'));
  });

  it.each(['webhook-id', 'webhook-timestamp', 'webhook-signature'])('rejects a missing %s', (name) => {
    expect(verify(headers({ [name]: undefined }))).toEqual({ ok: false, reason: `missing header ${name}` });
  });

  it('rejects a mix of webhook- and svix- headers', () => {
    const mixed = { 'svix-id': ID, 'webhook-timestamp': String(TIMESTAMP), 'webhook-signature': SIGNATURE };
    expect(verify(mixed)).toEqual({ ok: false, reason: 'missing header webhook-id' });
  });

  it.each(['hello', '1614265330.5', '-1614265330', ' 1614265330', ''])(
    'rejects the timestamp %j',
    (timestamp) => {
      expect(verify(headers({ 'webhook-timestamp': timestamp })).ok).toBe(false);
    },
  );

  it.each([
    ['an invalid signature', 'v1,dawfeoifkpqwoekfpqoekf'],
    ['a truncated signature', SIGNATURE.slice(0, -4)],
    ['a bare v1,', 'v1,'],
    ['only other versions', 'v2,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE= v1a,abc'],
    ['an unversioned signature', 'g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE='],
  ])('rejects %s', (_name, signature) => {
    expect(verify(headers({ 'webhook-signature': signature })).ok).toBe(false);
  });

  it('accepts a list of v2 entries plus one valid v1', () => {
    const list = `v2,${'A'.repeat(44)} v1,dawfeoifkpqwoekfpqoekf v2,Zm9v ${SIGNATURE}`;
    expect(verify(headers({ 'webhook-signature': list }))).toEqual({ ok: true });
  });

  it('rejects a timestamp more than five minutes old or ahead, accepts exactly five minutes', () => {
    const at = (offsetSeconds: number) => new Date((TIMESTAMP + offsetSeconds) * 1000);
    expect(verify(headers(), { now: at(301) })).toEqual({ ok: false, reason: 'timestamp too old' });
    expect(verify(headers(), { now: at(-301) })).toEqual({
      ok: false,
      reason: 'timestamp too far in the future',
    });
    expect(verify(headers(), { now: at(300) })).toEqual({ ok: true });
    expect(verify(headers(), { now: at(-300) })).toEqual({ ok: true });
  });

  it('rejects a wrong secret, a tampered body, a different id', () => {
    expect(verify(headers(), { secret: 'whsec_' + Buffer.from('another key').toString('base64') })).toEqual({
      ok: false,
      reason: 'signature mismatch',
    });
    expect(verify(headers(), { body: Buffer.from('{"test": 2432232315}') }).ok).toBe(false);
    expect(verify(headers({ 'webhook-id': 'msg_other' })).ok).toBe(false);
  });

  it('rejects a secret that is not base64 instead of throwing', () => {
    expect(verify(headers(), { secret: 'whsec_not base64!' }).ok).toBe(false);
  });

  it('rejects duplicated headers, as an array or comma-joined', () => {
    expect(verify(headers({ 'webhook-signature': [SIGNATURE, SIGNATURE] }))).toEqual({
      ok: false,
      reason: 'duplicated header webhook-signature',
    });
    expect(verify(headers({ 'webhook-signature': `v1,bogus, ${SIGNATURE}` })).ok).toBe(false);
    expect(verify(headers({ 'webhook-id': [ID, ID] })).ok).toBe(false);
    expect(verify({ ...headers(), 'Webhook-Signature': SIGNATURE }).ok).toBe(false);
  });
});

describe('standardWebhooksHeaders: the one signer', () => {
  it("signs the reference library's published vector", () => {
    const signed = standardWebhooksHeaders({
      id: ID,
      timestamp: NOW,
      body: BODY,
      keys: [standardWebhooksSigningKey(SECRET)],
    });
    expect(signed).toEqual(headers());
  });

  it('signs with every key, so the reference library verifies with either secret while one rotates out', () => {
    const [current, previous] = [generateStandardWebhooksSecret(), generateStandardWebhooksSecret()];
    const body = '{"type":"run.succeeded","timestamp":"2026-11-26T01:00:00.000Z","data":{"title":"ü"}}';
    const at = new Date();
    const signed = standardWebhooksHeaders({
      id: 'msg_1',
      timestamp: at,
      body,
      keys: [current, previous].map(standardWebhooksSigningKey),
    });
    for (const secret of [current, previous]) expect(new Webhook(secret).verify(body, signed)).toBeTruthy();
    expect(signed['webhook-signature']!.split(' ')[0]).toBe(new Webhook(current).sign('msg_1', at, body));
  });

  it('refuses a secret that is not base64 rather than signing with a mangled key', () => {
    expect(() => standardWebhooksSigningKey('whsec_not base64!')).toThrow('not base64');
  });
});
