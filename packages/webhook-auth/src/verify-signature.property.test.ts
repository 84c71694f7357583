import fc from 'fast-check';
import { SIGNATURE_SCHEMES, type SignatureScheme } from './signature-scheme';
import { signWebhook } from './sign';
import { verifySignature } from './verify-signature';

const NOW = new Date('2024-01-01T00:00:00Z');
// GitLab's token does not cover the body, so only the body-signing schemes take part in the mutation property.
const BODY_SIGNING = SIGNATURE_SCHEMES.filter((scheme) => scheme !== 'gitlab');

const secretFor = (scheme: SignatureScheme, bytes: Uint8Array): string =>
  scheme === 'standard-webhooks'
    ? `whsec_${Buffer.from(bytes).toString('base64')}`
    : Buffer.from(bytes).toString('hex');

const arbitraryCase = fc.record({
  scheme: fc.constantFrom(...BODY_SIGNING),
  secretBytes: fc.uint8Array({ minLength: 1, maxLength: 64 }),
  body: fc.uint8Array({ minLength: 1, maxLength: 512 }),
});

describe('sign-then-verify', () => {
  it('passes for any body and secret', () => {
    fc.assert(
      fc.property(arbitraryCase, ({ scheme, secretBytes, body }) => {
        const secret = secretFor(scheme, secretBytes);
        const rawBody = Buffer.from(body);
        const headers = signWebhook(scheme, { secret, body: rawBody, now: NOW });
        expect(verifySignature({ scheme, secret, headers, rawBody, now: NOW })).toEqual({ ok: true });
      }),
    );
  });

  it('fails after any single-byte change of the body', () => {
    fc.assert(
      fc.property(
        arbitraryCase,
        fc.nat(),
        fc.integer({ min: 1, max: 255 }),
        ({ scheme, secretBytes, body }, at, xor) => {
          const secret = secretFor(scheme, secretBytes);
          const headers = signWebhook(scheme, { secret, body: Buffer.from(body), now: NOW });
          const mutated = Buffer.from(body);
          const index = at % mutated.length;
          mutated[index] = (mutated[index] ?? 0) ^ xor;
          expect(verifySignature({ scheme, secret, headers, rawBody: mutated, now: NOW }).ok).toBe(false);
        },
      ),
    );
  });
});
