import { SIGNATURE_SCHEMES, type SignatureScheme } from './signature-scheme';
import { signWebhook } from './sign';
import { signedContentDigest } from './signed-content';
import { verifySignature } from './verify-signature';

const NOW = new Date('2024-01-01T00:00:00Z');
const BODY = Buffer.from('{"hello":"world"}');
const SECRET = 'whsec_c2VjcmV0LWtleS1ieXRlcw==';
const SIGNED_SCHEMES = SIGNATURE_SCHEMES.filter((s) => s !== 'gitlab');
const sign = (scheme: SignatureScheme, body = BODY, now = NOW, id = 'msg_1') =>
  signWebhook(scheme, { secret: SECRET, body, now, id });

describe('signedContentDigest', () => {
  it.each(SIGNED_SCHEMES)(
    '%s: a copy with new delivery headers and extra entries has the same digest',
    (scheme) => {
      const signed = sign(scheme);
      const copy: Record<string, string> = {
        ...signed,
        'x-github-delivery': 'another',
        'x-shopify-webhook-id': 'another',
        'linear-delivery': 'another',
        'x-service-delivery-id': 'another',
      };
      // Extra signature entries keep a Stripe or Standard Webhooks header valid: they must not change the digest.
      if (scheme === 'stripe') copy['stripe-signature'] += ',v1=00';
      if (scheme === 'standard-webhooks') copy['webhook-signature'] += ' v1,AAAA';
      expect(verifySignature({ scheme, secret: SECRET, headers: copy, rawBody: BODY, now: NOW })).toEqual({
        ok: true,
      });
      expect(signedContentDigest(scheme, copy, BODY)).toBe(signedContentDigest(scheme, signed, BODY));
      expect(signedContentDigest(scheme, signed, BODY)).toMatch(/^[0-9a-f]{64}$/);
    },
  );

  it.each(SIGNED_SCHEMES)('%s: another body is another digest', (scheme) => {
    const other = Buffer.from('{"hello":"there"}');
    expect(signedContentDigest(scheme, sign(scheme, other), other)).not.toBe(
      signedContentDigest(scheme, sign(scheme), BODY),
    );
  });

  it.each(['stripe', 'slack', 'standard-webhooks'] as const)(
    '%s: the same body signed at another time is another message',
    (scheme) => {
      const later = new Date(NOW.getTime() + 1000);
      expect(signedContentDigest(scheme, sign(scheme, BODY, later), BODY)).not.toBe(
        signedContentDigest(scheme, sign(scheme), BODY),
      );
    },
  );

  it('standard-webhooks: the signed message ID is part of the digest', () => {
    expect(
      signedContentDigest('standard-webhooks', sign('standard-webhooks', BODY, NOW, 'msg_2'), BODY),
    ).not.toBe(signedContentDigest('standard-webhooks', sign('standard-webhooks'), BODY));
  });

  it('the same body under two schemes never shares a digest', () => {
    expect(signedContentDigest('github', {}, BODY)).not.toBe(signedContentDigest('shopify', {}, BODY));
  });

  it('gitlab signs nothing, so it has no digest', () => {
    expect(signedContentDigest('gitlab', sign('gitlab'), BODY)).toBeUndefined();
  });
});
