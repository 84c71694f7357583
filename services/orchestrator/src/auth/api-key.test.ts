import { apiKeyMatches, generateApiKey, parseApiKey } from './api-key';

describe('API keys', () => {
  it('generates unique keys whose prefix is parseable and whose hash verifies', () => {
    const a = generateApiKey();
    const b = generateApiKey();
    expect(a.key).not.toBe(b.key);
    expect(a.key.startsWith(`${a.prefix}_`)).toBe(true);
    expect(parseApiKey(a.key)).toEqual({ prefix: a.prefix });
    expect(apiKeyMatches(a.key, a.secretHash)).toBe(true);
    expect(apiKeyMatches(b.key, a.secretHash)).toBe(false);
    expect(a.secretHash).not.toContain(a.key);
  });

  it('rejects malformed keys before touching storage', () => {
    for (const bad of [
      '',
      'Bearer x',
      'cvy_short_abc',
      `cvy_${'a'.repeat(10)}_${'b'.repeat(42)}`,
      `sk_${'a'.repeat(60)}`,
    ]) {
      expect(parseApiKey(bad)).toBeUndefined();
    }
  });

  it('never matches a hash of a different length', () => {
    expect(apiKeyMatches(generateApiKey().key, 'abcd')).toBe(false);
  });
});
