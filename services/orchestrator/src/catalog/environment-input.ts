import { environmentBody, type EnvironmentBody } from '@conveyor/environment-body';
import { AppError } from '@conveyor/errors';
import {
  assertRepositoryUrlAllowed,
  githubRepoUrl,
  ownerAndRepo,
  type RepositoryRef,
} from '../egress/repository-url';

/** The write body, checked again on this side with the gateway's own schema (@conveyor/environment-body). */
export function parseEnvironmentBody(json: string): EnvironmentBody {
  let raw: unknown;
  try {
    raw = JSON.parse(json || '{}');
  } catch {
    throw new AppError('invalid_request', 'body must be JSON');
  }
  const parsed = environmentBody.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new AppError('invalid_request', `${issue.path.join('.') || 'body'}: ${issue.message}`);
  }
  return parsed.data;
}

/**
 * The repositories an environment clones: `github_repos` become URLs under GIT_BASE_URL, `repositories` are taken
 * as given (checked against the allowed URL forms). Undefined when neither key was sent (update: unchanged).
 */
export function repositoriesOf(
  body: EnvironmentBody,
  options: { gitBaseUrl: string; allowLocal: boolean },
): RepositoryRef[] | undefined {
  if (body.github_repos === undefined && body.repositories === undefined) return undefined;
  const refs: RepositoryRef[] = [];
  for (const r of body.github_repos ?? [])
    refs.push({ url: githubRepoUrl(options.gitBaseUrl, r.owner, r.repo), owner: r.owner, repo: r.repo });
  for (const r of body.repositories ?? []) {
    assertRepositoryUrlAllowed(r.url, options.allowLocal);
    refs.push({
      url: r.url,
      ...ownerAndRepo(r.url),
      ...(r.directory ? { directory: r.directory } : {}),
      ...(r.ref ? { ref: r.ref } : {}),
      ...(r.push_secret_name ? { push_secret_name: r.push_secret_name } : {}),
      ...(r.pull_request ? { pull_request: r.pull_request } : {}),
    });
  }
  const seen = new Set<string>();
  for (const r of refs) {
    if (r.url.startsWith('file:') || r.url.startsWith('/'))
      assertRepositoryUrlAllowed(r.url, options.allowLocal);
    if (seen.has(r.url)) throw new AppError('invalid_request', `repository ${r.url} is listed twice`);
    seen.add(r.url);
  }
  return refs;
}
