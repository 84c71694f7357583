import { decideEgress, hostMatches } from './egress-proxy';

describe('hostMatches', () => {
  const patterns = ['github.com', '*.githubusercontent.com'];
  it('matches exact names and subdomains of wildcards, case-insensitively', () => {
    expect(hostMatches(patterns, 'GitHub.com')).toBe(true);
    expect(hostMatches(patterns, 'raw.githubusercontent.com')).toBe(true);
    expect(hostMatches(patterns, 'a.b.githubusercontent.com')).toBe(true);
  });
  it('does not match the apex of a wildcard, other subdomains, or look-alikes', () => {
    expect(hostMatches(patterns, 'githubusercontent.com')).toBe(false);
    expect(hostMatches(patterns, 'api.github.com')).toBe(false);
    expect(hostMatches(patterns, 'evilgithub.com')).toBe(false);
    expect(hostMatches(patterns, 'github.com.evil.dev')).toBe(false);
  });
});

describe('decideEgress', () => {
  const rules = {
    allowedHosts: ['localhost', '127.0.0.1', 'example.invalid'],
    internalHosts: ['127.0.0.1:8443'],
  };

  it('refuses hosts off the allow-list', async () => {
    expect(await decideEgress(rules, 'metadata.google.internal', 80)).toEqual({
      allowed: false,
      reason: 'host not on the allow-list',
    });
  });

  it('refuses allow-listed names that resolve to a non-public address (no reaching the platform by name)', async () => {
    expect(await decideEgress(rules, 'localhost', 5432)).toMatchObject({
      allowed: false,
      reason: expect.stringMatching(/non-public address/),
    });
    expect(await decideEgress(rules, '127.0.0.1', 5432)).toMatchObject({
      allowed: false,
      reason: expect.stringMatching(/non-public address/),
    });
  });

  it('lets the operator open one exact internal host:port, and only that port', async () => {
    expect(await decideEgress(rules, '127.0.0.1', 8443)).toEqual({ allowed: true, address: '127.0.0.1' });
    expect((await decideEgress(rules, '127.0.0.1', 8444)).allowed).toBe(false);
  });

  it('refuses names that do not resolve', async () => {
    expect(await decideEgress(rules, 'example.invalid', 443)).toEqual({
      allowed: false,
      reason: 'name does not resolve',
    });
  });
});
