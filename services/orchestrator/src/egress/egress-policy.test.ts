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

  it('permits public addresses only, by the classifier the runner uses too', () => {
    for (const ok of ['140.82.112.3', '2606:50c0:8000::153', '8.8.8.8'])
      expect(policy.permits(ok, 443)).toBe(true);
    for (const bad of ['127.0.0.1', '169.254.169.254', '::ffff:127.0.0.1', '2002:7f00:1::1', 'not-an-ip'])
      expect(policy.permits(bad, 443)).toBe(false);
  });

  it('an operator allow-list opens exactly its address:port pairs (IPv4-mapped addresses included)', () => {
    const allowing = new EgressPolicy(['127.0.0.0/8:8443', '[::1]:8443', '10.20.0.0/16:443'], resolve);
    for (const [ok, port] of [
      ['127.0.0.1', 8443],
      ['::1', 8443],
      ['::ffff:127.0.0.1', 8443],
      ['10.20.0.7', 443],
    ] as const)
      expect(allowing.permits(ok, port)).toBe(true);
    for (const [bad, port] of [
      ['127.0.0.1', 22],
      ['10.20.0.7', 8443],
      ['10.21.0.1', 443],
      ['169.254.169.254', 80],
      ['fe80::1', 8443],
    ] as const)
      expect(allowing.permits(bad, port)).toBe(false);
    expect(() => new EgressPolicy(['127.0.0.0/8'])).toThrow(/EGRESS_ALLOWED_ADDRESSES: .* CIDR:PORT/);
  });

  it('judges names after resolution: every address must be permitted', async () => {
    await expect(policy.resolvePermitted('git.example.com', 443)).resolves.toEqual(['140.82.112.3']);
    await expect(policy.resolvePermitted('metadata.example', 80)).rejects.toThrow(/169\.254\.169\.254/);
    await expect(policy.resolvePermitted('mixed.example', 443)).rejects.toThrow(/10\.1\.2\.3/);
    await expect(policy.resolvePermitted('[::1]', 443)).rejects.toThrow(/may not reach/);
    await expect(policy.resolvePermitted('nowhere.example', 443)).rejects.toThrow(/does not resolve/);
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
      policy: new EgressPolicy(['10.20.0.0/16:443', '10.20.0.0/16:22'], resolve),
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
