import { createHmac } from 'node:crypto';
import { signGithub, signShopify } from './sign';
import type { WebhookHeaders } from './types';
import { verifySignature } from './verify-signature';

const NOW = new Date('2024-01-01T00:00:00Z');

describe('github', () => {
  // GitHub's documentation vector.
  const SECRET = "It's a Secret to Everybody";
  const BODY = Buffer.from('Hello, World!');
  const SIGNATURE = 'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17';
  const verify = (headers: WebhookHeaders, options: { secret?: string; body?: Buffer } = {}) =>
    verifySignature({
      scheme: 'github',
      secret: options.secret ?? SECRET,
      headers,
      rawBody: options.body ?? BODY,
      now: NOW,
    });

  it('accepts the published vector and signs it identically', () => {
    expect(verify({ 'x-hub-signature-256': SIGNATURE })).toEqual({ ok: true });
    expect(signGithub({ secret: SECRET, body: BODY })).toEqual({ 'x-hub-signature-256': SIGNATURE });
  });

  it('rejects a wrong secret and a tampered body', () => {
    expect(verify({ 'x-hub-signature-256': SIGNATURE }, { secret: 'another secret' })).toEqual({
      ok: false,
      reason: 'signature mismatch',
    });
    expect(verify({ 'x-hub-signature-256': SIGNATURE }, { body: Buffer.from('Hello, World?') }).ok).toBe(
      false,
    );
  });

  it.each([
    ['missing', {}, 'missing header x-hub-signature-256'],
    ['SHA-1 only', { 'x-hub-signature': 'sha1=abc' }, 'missing header x-hub-signature-256'],
    [
      'no prefix',
      { 'x-hub-signature-256': SIGNATURE.slice('sha256='.length) },
      'malformed header x-hub-signature-256',
    ],
    [
      'wrong prefix',
      { 'x-hub-signature-256': SIGNATURE.replace('sha256', 'sha1') },
      'malformed header x-hub-signature-256',
    ],
    ['truncated', { 'x-hub-signature-256': SIGNATURE.slice(0, -1) }, 'signature mismatch'],
    [
      'duplicated',
      { 'x-hub-signature-256': [SIGNATURE, SIGNATURE] },
      'duplicated header x-hub-signature-256',
    ],
  ])('rejects a header that is %s', (_name, headers, reason) => {
    expect(verify(headers)).toEqual({ ok: false, reason });
  });
});

describe('shopify', () => {
  // No published vector: the expected MAC is computed with node's crypto, independently of our code.
  const SECRET = 'shpss_0123456789abcdef';
  const BODY = Buffer.from('{"id":820982911946154508,"email":"jon@example.com"}');
  const SIGNATURE = createHmac('sha256', SECRET).update(BODY).digest('base64');
  const verify = (headers: WebhookHeaders, options: { secret?: string; body?: Buffer } = {}) =>
    verifySignature({
      scheme: 'shopify',
      secret: options.secret ?? SECRET,
      headers,
      rawBody: options.body ?? BODY,
      now: NOW,
    });

  it('signs with the real algorithm and verifies it', () => {
    expect(signShopify({ secret: SECRET, body: BODY })).toEqual({ 'x-shopify-hmac-sha256': SIGNATURE });
    expect(verify({ 'X-Shopify-Hmac-SHA256': SIGNATURE })).toEqual({ ok: true });
  });

  it('rejects a wrong secret, a tampered body, a hex MAC, a missing or duplicated header', () => {
    expect(verify({ 'x-shopify-hmac-sha256': SIGNATURE }, { secret: 'shpss_other' }).ok).toBe(false);
    expect(verify({ 'x-shopify-hmac-sha256': SIGNATURE }, { body: Buffer.from('{}') }).ok).toBe(false);
    const hex = createHmac('sha256', SECRET).update(BODY).digest('hex');
    expect(verify({ 'x-shopify-hmac-sha256': hex }).ok).toBe(false);
    expect(verify({})).toEqual({ ok: false, reason: 'missing header x-shopify-hmac-sha256' });
    expect(verify({ 'x-shopify-hmac-sha256': [SIGNATURE, SIGNATURE] }).ok).toBe(false);
  });
});
