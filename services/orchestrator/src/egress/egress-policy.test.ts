import { EgressPolicy } from './egress-policy';
import { planGitFetch } from './git-egress';

const dns: Record<string, string[]> = {
  'git.example.com': ['140.82.112.3'],
  'metadata.example': ['169.254.169.254'],
  'mixed.example': ['140.82.112.3', '10.1.2.3'],
  'internal.example': ['10.20.0.7'],
  'v6.example': ['2606:50c0:8000::153'],
};
const resolve = async (host: string) => {
  const addresses = dns[host];
  if (!addresses) throw new Error('ENOTFOUND');
  return addresses;
};

describe('egress policy', () => {
  const policy = new EgressPolicy([], resolve);

  it('permits public unicast only: loopback, private, link-local, unique-local, mapped and unspecified are refused', () => {
    for (const ok of ['140.82.112.3', '2606:50c0:8000::153', '8.8.8.8'])
      expect(policy.permits(ok)).toBe(true);
    for (const bad of [
      '127.0.0.1',
      '10.0.0.1',
      '172.16.5.4',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      '::',
      'fe80::1',
      'fc00::1',
      'fd12:3456::1',
      '::ffff:127.0.0.1',
      '::ffff:169.254.169.254',
      '224.0.0.1',
      'not-an-ip',
    ]) {
      expect(policy.permits(bad)).toBe(false);
    }
  });

  it('an operator allow-list opens exactly its ranges (IPv4-mapped addresses included)', () => {
    const allowing = new EgressPolicy(['127.0.0.0/8', '::1/128', '10.20.0.0/16'], resolve);
    for (const ok of ['127.0.0.1', '::1', '::ffff:127.0.0.1', '10.20.0.7'])
      expect(allowing.permits(ok)).toBe(true);
    for (const bad of ['10.21.0.1', '169.254.169.254', 'fe80::1']) expect(allowing.permits(bad)).toBe(false);
    expect(() => new EgressPolicy(['not a cidr'])).toThrow(/EGRESS_ALLOWED_ADDRESSES/);
  });

  it('judges names after resolution: every address must be permitted', async () => {
    await expect(policy.resolvePermitted('git.example.com')).resolves.toEqual(['140.82.112.3']);
    await expect(policy.resolvePermitted('metadata.example')).rejects.toThrow(/169\.254\.169\.254/);
    await expect(policy.resolvePermitted('mixed.example')).rejects.toThrow(/10\.1\.2\.3/);
    await expect(policy.resolvePermitted('[::1]')).rejects.toThrow(/may not reach/);
    await expect(policy.resolvePermitted('nowhere.example')).rejects.toThrow(/does not resolve/);
  });
});

describe('git fetch plans', () => {
  const options = { policy: new EgressPolicy([], resolve), allowedSchemes: ['https'], allowLocal: false };

  it('pins https to the checked address, refuses redirects and limits git to the one transport', async () => {
    expect(await planGitFetch('https://git.example.com/acme/api.git', options)).toEqual({
      configArgs: [
        '-c',
        'http.curloptResolve=git.example.com:443:140.82.112.3',
        '-c',
        'http.followRedirects=false',
      ],
      env: { GIT_ALLOW_PROTOCOL: 'https' },
    });
    expect((await planGitFetch('https://v6.example:8443/a/b.git', options)).configArgs[1]).toBe(
      'http.curloptResolve=v6.example:8443:[2606:50c0:8000::153]',
    );
  });

  it('refuses private destinations, other transports and local repositories unless allowed', async () => {
    for (const url of [
      'https://metadata.example/latest.git',
      'https://127.0.0.1/a/b.git',
      'https://[::ffff:10.0.0.1]/a/b.git',
      'https://internal.example/a/b.git',
    ]) {
      await expect(planGitFetch(url, options)).rejects.toThrow(/may not reach/);
    }
    for (const url of [
      'http://git.example.com/a/b.git',
      'git@git.example.com:a/b.git',
      'ssh://git.example.com/a/b.git',
      'git://git.example.com/a/b.git',
    ]) {
      await expect(planGitFetch(url, options)).rejects.toThrow(/GIT_ALLOWED_SCHEMES/);
    }
    await expect(planGitFetch('file:///srv/git/a.git', options)).rejects.toThrow(/GIT_ALLOW_LOCAL_URLS/);
    expect(await planGitFetch('file:///srv/git/a.git', { ...options, allowLocal: true })).toEqual({
      configArgs: [],
      env: { GIT_ALLOW_PROTOCOL: 'file' },
    });
    const internal = {
      ...options,
      policy: new EgressPolicy(['10.20.0.0/16'], resolve),
      allowedSchemes: ['https', 'ssh'],
    };
    expect((await planGitFetch('https://internal.example/a/b.git', internal)).env).toEqual({
      GIT_ALLOW_PROTOCOL: 'https',
    });
    expect(await planGitFetch('git@internal.example:a/b.git', internal)).toEqual({
      configArgs: [],
      env: { GIT_ALLOW_PROTOCOL: 'ssh' },
    });
  });
});
