import { secretsEqual } from './hmac';
import { generateStandardWebhooksSecret, generateWebhookSecret, isUrlSafeSecret } from './secrets';
import { verifySignature } from './verify-signature';
import { signStandardWebhooks } from './sign';

describe('secrets', () => {
  it('generates distinct URL-safe webhook secrets of 32 bytes', () => {
    const a = generateWebhookSecret();
    expect(isUrlSafeSecret(a)).toBe(true);
    expect(Buffer.from(a, 'base64url')).toHaveLength(32);
    expect(generateWebhookSecret()).not.toBe(a);
  });

  it('generates Standard Webhooks secrets that sign and verify', () => {
    const secret = generateStandardWebhooksSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(Buffer.from(secret.slice('whsec_'.length), 'base64')).toHaveLength(32);
    const now = new Date();
    const body = Buffer.from('{}');
    const headers = signStandardWebhooks({ secret, id: 'msg_1', timestamp: now, body });
    expect(verifySignature({ scheme: 'standard-webhooks', secret, headers, rawBody: body, now })).toEqual({
      ok: true,
    });
  });

  it.each([
    ['a generated secret', 'kP3_x-9ZqRw2LmN8', true],
    ['too short', 'abc_DEF-123', false],
    ['a slash', 'abcdefgh/ijklmnop', false],
    ['padding', 'abcdefghijklmnop==', false],
    ['a space', 'abcdefgh ijklmnop', false],
    ['percent-encoding', 'abcdefgh%20ijklmnop', false],
    ['empty', '', false],
  ])('isUrlSafeSecret: %s', (_name, secret, expected) => {
    expect(isUrlSafeSecret(secret)).toBe(expected);
  });

  it('secretsEqual compares exactly, whatever the lengths', () => {
    expect(secretsEqual('token', 'token')).toBe(true);
    expect(secretsEqual('token', 'token2')).toBe(false);
    expect(secretsEqual('token', 'Token')).toBe(false);
    expect(secretsEqual('', '')).toBe(true);
    expect(secretsEqual('', 'x')).toBe(false);
  });
});
