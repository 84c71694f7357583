import { parseAddress } from '@conveyor/egress-address';
import { AppError } from '@conveyor/errors';
import { isLocalRepositoryUrl, SCP_LIKE } from './repository-url';
import { urlPort, type EgressPolicy } from './egress-policy';

/** What git may use for one fetch: extra `-c` options (before the subcommand) and environment. */
export interface GitFetchPlan {
  configArgs: string[];
  env: Record<string, string>;
}

export interface GitEgressOptions {
  policy: EgressPolicy;
  /** Transports allowed (GIT_ALLOWED_SCHEMES): `https` by default; `http`, `ssh`, `git` when an operator adds them. */
  allowedSchemes: string[];
  /** file:// and local paths (GIT_ALLOW_LOCAL_URLS). */
  allowLocal: boolean;
}

/**
 * Checks a repository URL right before git fetches it, after DNS: the scheme must be allowed and every address the
 * host resolves to permitted by the egress policy. Over http(s) the resolved address is pinned
 * (`http.curloptResolve`), so git connects to the address that was checked and a second DNS answer cannot redirect
 * it; redirects are not followed. `GIT_ALLOW_PROTOCOL` limits git to the one transport (no `ext::`, no `file://`
 * smuggled through submodules or alternates). ssh and git:// cannot be pinned: allowing them accepts that window.
 */
export async function planGitFetch(url: string, options: GitEgressOptions): Promise<GitFetchPlan> {
  const refuse = (why: string) =>
    new AppError('invalid_request', `repository URL ${JSON.stringify(url)} ${why}`);
  if (isLocalRepositoryUrl(url)) {
    if (!options.allowLocal) throw refuse('is local; local repositories are disabled (GIT_ALLOW_LOCAL_URLS)');
    return { configArgs: [], env: { GIT_ALLOW_PROTOCOL: 'file' } };
  }
  let scheme: string;
  let host: string;
  let port: number;
  const scp = SCP_LIKE.exec(url);
  if (scp) {
    scheme = 'ssh';
    host = scp[1]!;
    port = 22;
  } else {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw refuse('is not a git repository URL');
    }
    scheme = parsed.protocol.replace(/:$/, '');
    host = parsed.hostname;
    port = urlPort(parsed);
  }
  if (!options.allowedSchemes.includes(scheme))
    throw refuse(`uses ${scheme}, which outbound fetches may not use (GIT_ALLOWED_SCHEMES)`);
  const addresses = await options.policy.resolvePermitted(host, port);
  const env = { GIT_ALLOW_PROTOCOL: scheme };
  if (scheme !== 'http' && scheme !== 'https') return { configArgs: [], env };
  const noRedirects = ['-c', 'http.followRedirects=false'];
  // An address literal is connected to as is; a name is pinned to what was checked.
  if (parseAddress(host.replace(/^\[(.*)\]$/, '$1'))) return { configArgs: noRedirects, env };
  const pinned = addresses.map((a) => (a.includes(':') ? `[${a}]` : a)).join(',');
  return { configArgs: ['-c', `http.curloptResolve=${host}:${port}:${pinned}`, ...noRedirects], env };
}
