import { assertRepositoryUrlAllowed, githubRepoUrl, ownerAndRepo } from './repository-url';

describe('repository URLs', () => {
  it('derives owner and repo from https, scp-like, file and path forms', () => {
    expect(ownerAndRepo('https://github.com/acme/api.git')).toEqual({ owner: 'acme', repo: 'api' });
    expect(ownerAndRepo('git@github.com:acme/web')).toEqual({ owner: 'acme', repo: 'web' });
    expect(ownerAndRepo('file:///tmp/x/acme/tools.git')).toEqual({ owner: 'acme', repo: 'tools' });
    expect(ownerAndRepo('/srv/git/solo.git')).toEqual({ owner: 'git', repo: 'solo' });
  });

  it('maps github_repos under the configured base', () => {
    expect(githubRepoUrl('https://github.com/', 'acme', 'api')).toBe('https://github.com/acme/api.git');
  });

  it('rejects option injection, remote helpers and, unless allowed, local repositories', () => {
    for (const url of [
      '--upload-pack=touch /tmp/x',
      'ext::sh -c touch% /tmp/pwned',
      'ftp://host/a/b',
      'not a url',
      '',
    ]) {
      expect(() => assertRepositoryUrlAllowed(url, true)).toThrow(/repository URL/);
    }
    expect(() => assertRepositoryUrlAllowed('file:///tmp/a/b.git', false)).toThrow(
      /local repositories are disabled/,
    );
    expect(() => assertRepositoryUrlAllowed('file:///tmp/a/b.git', true)).not.toThrow();
    expect(() => assertRepositoryUrlAllowed('https://github.com/acme/api.git', false)).not.toThrow();
    expect(() => assertRepositoryUrlAllowed('git@github.com:acme/api.git', false)).not.toThrow();
    // Syntax only: where an IPv6 literal may be fetched from is the egress policy's decision.
    expect(() =>
      assertRepositoryUrlAllowed('https://[2606:50c0:8000::153]/acme/api.git', false),
    ).not.toThrow();
  });
});
