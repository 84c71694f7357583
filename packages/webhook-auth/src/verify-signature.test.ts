import { SIGNATURE_SCHEMES, isSignatureScheme, type SignatureScheme } from './signature-scheme';
import { signWebhook } from './sign';
import { verifySignature } from './verify-signature';

const NOW = new Date('2024-01-01T00:00:00Z');
const BODY = Buffer.from('{"hello":"world"}');
const secretFor = (scheme: SignatureScheme) =>
  scheme === 'standard-webhooks' ? 'whsec_c2VjcmV0LWtleS1ieXRlcw==' : 'secret';
const verify = (
  scheme: SignatureScheme,
  headers: Record<string, string | string[] | undefined>,
  secret = secretFor(scheme),
) => verifySignature({ scheme, secret, headers, rawBody: BODY, now: NOW });

describe('verifySignature', () => {
  it.each(SIGNATURE_SCHEMES)('%s: accepts what the matching signer produced', (scheme) => {
    expect(verify(scheme, signWebhook(scheme, { secret: secretFor(scheme), body: BODY, now: NOW }))).toEqual({
      ok: true,
    });
  });

  it.each(SIGNATURE_SCHEMES)('%s: rejects a request without headers with a reason', (scheme) => {
    const result = verify(scheme, {});
    expect(result.ok).toBe(false);
    expect(!result.ok && result.reason).toMatch(/^missing header /);
  });

  it.each(SIGNATURE_SCHEMES)('%s: rejects every signed header when duplicated', (scheme) => {
    const signed = signWebhook(scheme, { secret: secretFor(scheme), body: BODY, now: NOW });
    for (const [name, value] of Object.entries(signed)) {
      expect(verify(scheme, { ...signed, [name]: [value, value] })).toEqual({
        ok: false,
        reason: `duplicated header ${name}`,
      });
    }
  });

  it.each(SIGNATURE_SCHEMES)('%s: rejects a wrong secret', (scheme) => {
    const signed = signWebhook(scheme, { secret: secretFor(scheme), body: BODY, now: NOW });
    const wrong = scheme === 'standard-webhooks' ? 'whsec_b3RoZXIta2V5LWJ5dGVz' : 'other';
    expect(verify(scheme, signed, wrong).ok).toBe(false);
  });

  it.each(SIGNATURE_SCHEMES)('%s: never throws on hostile header values', (scheme) => {
    const junk = [
      '',
      ',',
      '=',
      ' ',
      'v1,',
      't=',
      '=,=',
      'v0=',
      'sha256=',
      '\u0000',
      'é'.repeat(1000),
      ', , ,',
    ];
    const names = [
      'webhook-id',
      'webhook-timestamp',
      'webhook-signature',
      'svix-signature',
      'stripe-signature',
      'x-hub-signature-256',
      'x-gitlab-token',
      'x-slack-signature',
      'x-slack-request-timestamp',
      'linear-signature',
      'x-shopify-hmac-sha256',
    ];
    for (const value of junk) {
      const headers = Object.fromEntries(names.map((name) => [name, value]));
      expect(verify(scheme, headers).ok).toBe(false);
      expect(verify(scheme, Object.fromEntries(names.map((name) => [name, [value]]))).ok).toBe(false);
    }
  });

  it('fails closed on an empty secret, an unknown scheme and an invalid clock', () => {
    const signed = signWebhook('github', { secret: '', body: BODY, now: NOW });
    expect(verify('github', signed, '')).toEqual({ ok: false, reason: 'no secret configured' });
    expect(verify('gitlab', { 'x-gitlab-token': '' }, '')).toEqual({
      ok: false,
      reason: 'no secret configured',
    });
    expect(
      verifySignature({
        scheme: 'bitbucket' as SignatureScheme,
        secret: 's',
        headers: {},
        rawBody: BODY,
        now: NOW,
      }),
    ).toEqual({ ok: false, reason: 'unknown signature scheme' });
    const standard = signWebhook('standard-webhooks', {
      secret: secretFor('standard-webhooks'),
      body: BODY,
      now: NOW,
    });
    expect(
      verifySignature({
        scheme: 'standard-webhooks',
        secret: secretFor('standard-webhooks'),
        headers: standard,
        rawBody: BODY,
        now: new Date(NaN),
      }),
    ).toEqual({ ok: false, reason: 'invalid clock' });
  });
});

describe('isSignatureScheme', () => {
  it('recognises exactly the listed schemes', () => {
    expect(SIGNATURE_SCHEMES.every(isSignatureScheme)).toBe(true);
    expect(['', 'Stripe', 'svix', 'standard_webhooks', 1, null, undefined].some(isSignatureScheme)).toBe(
      false,
    );
  });
});
