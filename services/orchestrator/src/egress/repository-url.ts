import { AppError } from '@conveyor/errors';

/** `repositories[].pull_request`: the pull request to open from the pushed branch (github/open-pull-request.ts). */
export interface PullRequestSpec {
  base?: string;
  draft?: boolean;
  title?: string;
}

export interface RepositoryRef {
  url: string;
  owner: string;
  repo: string;
  directory?: string;
  ref?: string;
  /** Team secret holding the credential the run's branch is pushed with (docs/harnesses.md). */
  push_secret_name?: string;
  /** Open a pull request from the pushed branch (github/open-pull-request.ts). */
  pull_request?: PullRequestSpec;
}

/** What an environment shows and a run is handed of a repository: everything but the derived owner and name. */
export function repositorySpec(r: RepositoryRef): {
  url: string;
  directory?: string;
  ref?: string;
  push_secret_name?: string;
  pull_request?: PullRequestSpec;
} {
  return {
    url: r.url,
    ...(r.directory ? { directory: r.directory } : {}),
    ...(r.ref ? { ref: r.ref } : {}),
    ...(r.push_secret_name ? { push_secret_name: r.push_secret_name } : {}),
    ...(r.pull_request ? { pull_request: r.pull_request } : {}),
  };
}

/**
 * A repository as a guest's run of another team's environment gets it: to clone, never to push. The push would use a
 * secret of the run's team sent to a URL the environment's team chose, or the owner's secret for work the guest's
 * run made; neither team agreed to that (docs/guests.md "Pushes").
 */
export function withoutPush(
  spec: ReturnType<typeof repositorySpec>,
): Omit<ReturnType<typeof repositorySpec>, 'push_secret_name' | 'pull_request'> {
  const { push_secret_name: _secret, pull_request: _pullRequest, ...clone } = spec;
  return clone;
}

/** `user@host:path`, git's ssh shorthand. */
export const SCP_LIKE = /^[A-Za-z0-9._-]+@([A-Za-z0-9.-]+):(.+)$/;
/** git's `<transport>::<address>` remote-helper syntax (an IPv6 literal's `[::1]` is not one). */
const REMOTE_HELPER = /^[A-Za-z0-9][A-Za-z0-9+.-]*::/;
const REMOTE_SCHEMES = new Set(['https:', 'http:', 'ssh:', 'git:']);

/** file:// URLs and plain paths: the orchestrator and runners would read their own disk. */
export function isLocalRepositoryUrl(url: string): boolean {
  return url.startsWith('file:') || url.startsWith('/') || url.startsWith('./') || url.startsWith('../');
}

/**
 * Rejects what git would treat as something other than a repository to fetch: option-looking values and the
 * `<transport>::<address>` remote-helper form (`ext::` runs arbitrary commands). Local URLs only when allowed.
 */
export function assertRepositoryUrlAllowed(url: string, allowLocal: boolean): void {
  const bad = (why: string) =>
    new AppError('invalid_request', `repository URL ${JSON.stringify(url)} ${why}`);
  if (!url || url.startsWith('-') || REMOTE_HELPER.test(url) || /[\s\0]/.test(url))
    throw bad('is not a git repository URL');
  if (isLocalRepositoryUrl(url)) {
    if (!allowLocal) throw bad('is local; local repositories are disabled (GIT_ALLOW_LOCAL_URLS)');
    return;
  }
  if (SCP_LIKE.test(url)) return;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw bad('is not a git repository URL');
  }
  if (!REMOTE_SCHEMES.has(parsed.protocol)) throw bad(`uses an unsupported scheme (${parsed.protocol})`);
}

/** `…/acme/api.git` → {owner: acme, repo: api}: the last two path segments, as skill specs name them. */
export function ownerAndRepo(url: string): { owner: string; repo: string } {
  let path: string;
  const scp = SCP_LIKE.exec(url);
  if (scp) path = scp[2]!;
  else {
    try {
      path = decodeURIComponent(new URL(url).pathname);
    } catch {
      path = url;
    }
  }
  const parts = path.split('/').filter(Boolean);
  const repo = (parts.pop() ?? 'repo').replace(/\.git$/, '') || 'repo';
  const owner = parts.pop() ?? 'local';
  return { owner, repo };
}

/** `github_repos` items of the contract become clone URLs under the configured base (GIT_BASE_URL). */
export function githubRepoUrl(baseUrl: string, owner: string, repo: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/${owner}/${repo}.git`;
}
