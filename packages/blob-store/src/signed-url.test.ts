import { MAX_SIGNED_LINK_TTL_SECONDS, signBlobToken, signBlobUrl, verifyBlobToken } from './signed-url';

describe('signed blob links', () => {
  const secret = 'test-secret-0123456789abcdef';
  const now = new Date('2026-11-22T10:00:00Z');
  const expiresAt = new Date('2026-11-22T10:15:00Z');
  const key = 'transcripts/6f1c2d4e-0000-4000-8000-000000000001/1.jsonl';

  it('builds a URL under the public base and verifies its token', () => {
    const url = signBlobUrl('http://127.0.0.1:8080/v1/', key, expiresAt, secret);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:8080\/v1\/blobs\/[A-Za-z0-9_-]+\.\d+\.[A-Za-z0-9_-]+$/);
    const token = url.slice(url.lastIndexOf('/') + 1);
    expect(verifyBlobToken(token, secret, now)).toEqual({ ok: true, key, expiresAt });
  });

  it('refuses an expired link, at and after the expiry', () => {
    const token = signBlobToken(key, expiresAt, secret);
    expect(verifyBlobToken(token, secret, new Date(expiresAt.getTime() - 1)).ok).toBe(true);
    expect(verifyBlobToken(token, secret, expiresAt)).toEqual({ ok: false, reason: 'expired' });
    expect(verifyBlobToken(token, secret, new Date('2027-01-01T00:00:00Z'))).toEqual({
      ok: false,
      reason: 'expired',
    });
  });

  it('refuses a validly signed link that lives longer than the cap', () => {
    const token = signBlobToken(
      key,
      new Date(now.getTime() + (MAX_SIGNED_LINK_TTL_SECONDS + 60) * 1000),
      secret,
    );
    expect(verifyBlobToken(token, secret, now)).toEqual({ ok: false, reason: 'malformed' });
  });

  it('refuses tampered keys, expiries and signatures, and another secret', () => {
    const token = signBlobToken(key, expiresAt, secret);
    const [k, exp, sig] = token.split('.') as [string, string, string];
    const otherKey = Buffer.from('transcripts/other/1.jsonl').toString('base64url');
    expect(verifyBlobToken(`${otherKey}.${exp}.${sig}`, secret, now)).toEqual({
      ok: false,
      reason: 'bad_signature',
    });
    expect(verifyBlobToken(`${k}.${Number(exp) + 3600}.${sig}`, secret, now)).toEqual({
      ok: false,
      reason: 'bad_signature',
    });
    const flipped = (sig[0] === 'A' ? 'B' : 'A') + sig.slice(1);
    expect(verifyBlobToken(`${k}.${exp}.${flipped}`, secret, now)).toEqual({
      ok: false,
      reason: 'bad_signature',
    });
    expect(verifyBlobToken(`${k}.${exp}.${sig.slice(0, -2)}`, secret, now)).toEqual({
      ok: false,
      reason: 'bad_signature',
    });
    expect(verifyBlobToken(token, 'another-secret', now)).toEqual({ ok: false, reason: 'bad_signature' });
  });

  it('refuses malformed tokens without throwing', () => {
    for (const bad of [
      '',
      'abc',
      'a.b',
      'a.b.c.d',
      '!!.1.abc',
      'YQ.notanumber.abc',
      'YQ.1.',
      'YQ.-1.abc',
      'YR.1.abc',
    ]) {
      expect(verifyBlobToken(bad, secret, now)).toEqual({
        ok: false,
        reason: expect.stringMatching(/malformed|bad_signature/),
      });
    }
    expect(verifyBlobToken('a.b', secret, now)).toEqual({ ok: false, reason: 'malformed' });
  });

  it('during a signing-secret rotation, accepts links of the listed earlier secrets only', () => {
    const rotated = 'the-new-secret-0123456789abcdef';
    const oldLink = signBlobToken(key, expiresAt, secret);
    expect(verifyBlobToken(signBlobToken(key, expiresAt, rotated), [rotated, secret], now).ok).toBe(true);
    expect(verifyBlobToken(oldLink, [rotated, secret], now)).toEqual({ ok: true, key, expiresAt });
    // Once the old secret is dropped from the list, its links stop working.
    expect(verifyBlobToken(oldLink, [rotated], now)).toEqual({ ok: false, reason: 'bad_signature' });
    expect(verifyBlobToken(oldLink, [], now)).toEqual({ ok: false, reason: 'bad_signature' });
  });
});
