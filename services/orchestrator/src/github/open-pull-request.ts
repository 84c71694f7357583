import { AppError } from '@conveyor/errors';
import { ownerAndRepo, type PullRequestSpec } from '../egress/repository-url';
import { githubMessage, githubRequest, type GitHubApi, type GitHubResponse } from './github-rest';

/** `repositories[].pull_request` of an environment (docs/harnesses.md "Pull requests"). */
export interface PullRequestInput {
  repositoryUrl: string;
  /** The pushed branch, `conveyor/run-<id>`. */
  head: string;
  spec: PullRequestSpec;
  /** The ref the environment clones, the base when the spec names none (else the repository's default branch). */
  ref?: string;
  title: string;
  body: string;
}

const EXISTS = /pull request already exists/i;

/**
 * What a refusal means, as a stable code (the run's error_code) and a sentence naming the repository and branch. The
 * branch stays pushed whatever happens here: the work is not lost with the pull request.
 */
function refusal(res: GitHubResponse, where: string, base: string): AppError {
  const said = githubMessage(res);
  const details = { github_status: res.status, reason: '' };
  if (res.status === 401 || res.status === 403)
    return new AppError(
      'external_authentication_required',
      `GitHub refused the push secret's token opening a pull request on ${where} (${res.status}: ${said})`,
      { details: { ...details, reason: 'token_refused' } },
    );
  if (res.status === 404)
    return new AppError(
      'resource_not_found',
      `GitHub found no repository ${where} for the push secret's token (404)`,
      { details: { ...details, reason: 'repository_not_found' } },
    );
  if (res.status === 422 && EXISTS.test(said))
    return new AppError('conflict', `A pull request from this branch is already open on ${where}: ${said}`, {
      details: { ...details, reason: 'pull_request_exists' },
    });
  if (res.status === 422 && /base/i.test(said))
    return new AppError('invalid_request', `The base branch "${base}" does not exist on ${where}: ${said}`, {
      details: { ...details, reason: 'base_branch_missing' },
    });
  return new AppError('resource_unavailable', `GitHub could not open a pull request on ${where}: ${said}`, {
    details: { ...details, reason: 'github_error' },
  });
}

/**
 * Opens a pull request from the run's pushed branch (POST /repos/{owner}/{repo}/pulls). The base is the spec's, else
 * the environment's ref, else the repository's default branch (one more call to learn it).
 */
export async function openPullRequest(
  api: GitHubApi,
  token: string,
  input: PullRequestInput,
): Promise<{ url: string; number: number; base: string }> {
  const { owner, repo } = ownerAndRepo(input.repositoryUrl);
  const where = `${owner}/${repo}`;
  const path = `/repos/${encodeURIComponent(owner)}/${encodeURIComponent(repo)}`;
  let base = input.spec.base ?? input.ref;
  if (!base) {
    const res = await githubRequest(api, token, 'GET', path);
    if (res.status !== 200 || typeof res.body.default_branch !== 'string')
      throw refusal(res, where, '(default branch)');
    base = res.body.default_branch;
  }
  const res = await githubRequest(api, token, 'POST', `${path}/pulls`, {
    title: input.spec.title ?? input.title,
    head: input.head,
    base,
    body: input.body,
    draft: input.spec.draft ?? false,
  });
  if (res.status === 201 && typeof res.body.html_url === 'string')
    return { url: res.body.html_url, number: Number(res.body.number), base };
  // The branch is the run's own, so an open pull request from it is this run's, opened by an earlier execution (the
  // force-push just updated it) or by a person: report that one instead of failing a follow-up.
  if (res.status === 422 && EXISTS.test(githubMessage(res))) {
    const open = await openPullRequestFrom(api, token, path, `${owner}:${input.head}`);
    if (open) return open;
  }
  throw refusal(res, where, base);
}

/** The open pull request whose head is `head` (`owner:branch`), if the token can see one. */
async function openPullRequestFrom(
  api: GitHubApi,
  token: string,
  path: string,
  head: string,
): Promise<{ url: string; number: number; base: string } | undefined> {
  const res = await githubRequest(
    api,
    token,
    'GET',
    `${path}/pulls?state=open&head=${encodeURIComponent(head)}`,
  );
  const pull = res.status === 200 ? res.items[0] : undefined;
  if (!pull || typeof pull.html_url !== 'string') return undefined;
  const base = (pull.base as { ref?: unknown } | undefined)?.ref;
  return { url: pull.html_url, number: Number(pull.number), base: typeof base === 'string' ? base : '' };
}
