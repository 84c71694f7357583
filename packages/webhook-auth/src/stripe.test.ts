import { createHmac } from 'node:crypto';
import { signStripe } from './sign';
import { verifySignature } from './verify-signature';

// Stripe publishes no vector: the expected MAC is computed here with node's crypto, independently of our code.
const SECRET = 'whsec_test_secret';
const T = 1700000000;
const NOW = new Date(T * 1000);
const BODY = Buffer.from('{"id":"evt_1","object":"event","type":"payment_intent.succeeded"}');
const mac = (secret: string, t: number, body: Buffer) =>
  createHmac('sha256', secret).update(`${t}.`).update(body).digest('hex');
const VALID = mac(SECRET, T, BODY);

const verify = (
  header: string | string[] | undefined,
  options: { now?: Date; secret?: string; body?: Buffer } = {},
) =>
  verifySignature({
    scheme: 'stripe',
    secret: options.secret ?? SECRET,
    headers: { 'stripe-signature': header },
    rawBody: options.body ?? BODY,
    now: options.now ?? NOW,
  });

describe('stripe', () => {
  it('signs with the real algorithm and verifies it', () => {
    const header = signStripe({ secret: SECRET, body: BODY, timestamp: NOW })['stripe-signature'];
    expect(header).toBe(`t=${T},v1=${VALID}`);
    expect(verify(header)).toEqual({ ok: true });
  });

  it('accepts any of several v1 entries and ignores v0', () => {
    expect(verify(`t=${T},v1=${'0'.repeat(64)},v0=${VALID},v1=${VALID}`)).toEqual({ ok: true });
    expect(verify(`v0=abc,v1=${VALID},t=${T}`)).toEqual({ ok: true });
  });

  it('rejects a header whose only valid MAC is under v0', () => {
    expect(verify(`t=${T},v0=${VALID}`)).toEqual({
      ok: false,
      reason: 'no v1 signature in header stripe-signature',
    });
  });

  it('rejects a timestamp older than 300 s and, by our choice, more than 300 s ahead', () => {
    const at = (offset: number) => new Date((T + offset) * 1000);
    expect(verify(`t=${T},v1=${VALID}`, { now: at(300) })).toEqual({ ok: true });
    expect(verify(`t=${T},v1=${VALID}`, { now: at(301) })).toEqual({
      ok: false,
      reason: 'timestamp too old',
    });
    expect(verify(`t=${T},v1=${VALID}`, { now: at(-301) })).toEqual({
      ok: false,
      reason: 'timestamp too far in the future',
    });
  });

  it('rejects a signature over another timestamp', () => {
    expect(verify(`t=${T + 1},v1=${VALID}`).ok).toBe(false);
  });

  it.each([
    ['missing', undefined, 'missing header stripe-signature'],
    ['empty', '', 'missing header stripe-signature'],
    ['no t', `v1=${VALID}`, 'malformed header stripe-signature'],
    ['two t', `t=${T},t=${T},v1=${VALID}`, 'malformed header stripe-signature'],
    ['non-numeric t', `t=soon,v1=${VALID}`, 'malformed header stripe-signature'],
    ['an item without =', `t=${T},${VALID}`, 'malformed header stripe-signature'],
    ['an item with an empty key', `t=${T},=${VALID}`, 'malformed header stripe-signature'],
    ['a trailing comma', `t=${T},v1=${VALID},`, 'malformed header stripe-signature'],
    ['no separators', `t${T}v1${VALID}`, 'malformed header stripe-signature'],
    ['a truncated MAC', `t=${T},v1=${VALID.slice(0, 40)}`, 'signature mismatch'],
    ['an upper-case MAC', `t=${T},v1=${VALID.toUpperCase()}`, 'signature mismatch'],
    ['an empty v1', `t=${T},v1=`, 'signature mismatch'],
    [
      'a duplicated header',
      [`t=${T},v1=${VALID}`, `t=${T},v1=${VALID}`],
      'duplicated header stripe-signature',
    ],
    [
      'a comma-joined duplicate',
      `t=${T},v1=${VALID}, t=${T},v1=${VALID}`,
      'duplicated header stripe-signature',
    ],
  ])('rejects %s', (_name, header, reason) => {
    expect(verify(header)).toEqual({ ok: false, reason });
  });

  it('rejects a wrong secret and a tampered body', () => {
    expect(verify(`t=${T},v1=${VALID}`, { secret: 'whsec_other' })).toEqual({
      ok: false,
      reason: 'signature mismatch',
    });
    expect(
      verify(`t=${T},v1=${VALID}`, { body: Buffer.from(BODY.toString().replace('evt_1', 'evt_2')) }).ok,
    ).toBe(false);
  });

  it('derives its key differently from standard-webhooks for the same whsec_ secret', () => {
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const stringKey = secret;
    const decodedKey = Buffer.from(secret.slice('whsec_'.length), 'base64');
    const stripeMac = (key: string | Buffer) =>
      createHmac('sha256', key).update(`${T}.`).update(BODY).digest('hex');
    const standardMac = (key: string | Buffer) =>
      createHmac('sha256', key).update(`msg_1.${T}.`).update(BODY).digest('base64');
    const verifyStandard = (signature: string) =>
      verifySignature({
        scheme: 'standard-webhooks',
        secret,
        headers: {
          'webhook-id': 'msg_1',
          'webhook-timestamp': String(T),
          'webhook-signature': `v1,${signature}`,
        },
        rawBody: BODY,
        now: NOW,
      });

    expect(verify(`t=${T},v1=${stripeMac(stringKey)}`, { secret })).toEqual({ ok: true });
    expect(verify(`t=${T},v1=${stripeMac(decodedKey)}`, { secret }).ok).toBe(false);
    expect(verifyStandard(standardMac(decodedKey))).toEqual({ ok: true });
    expect(verifyStandard(standardMac(stringKey)).ok).toBe(false);
  });
});
