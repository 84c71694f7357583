import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { AppError } from '@conveyor/errors';
import type { PrismaClient } from '@conveyor/db';
import { redactUrl } from '@conveyor/logger';
import type { BranchPush, PullRequestOutcome, PushedBranch } from './runner-messages';
import type { GitFetchPlan } from '../egress/git-egress';
import type { PullRequestSpec } from '../egress/repository-url';
import { git } from '../egress/run-git';
import { sessionLinkOf } from '../events/event-body';
import { apiTokenOf, type GitHubApi } from '../github/github-rest';
import { openPullRequest } from '../github/open-pull-request';
import { SecretCipherError, type SecretCipher } from '../secrets/secret-cipher';
import { readTeamSecretValue } from '../secrets/team-secrets';
import { lockRunForRunner } from './report-events';
import { ownerAndRepo } from '../egress/repository-url';
import { GITHUB_APP_CREDENTIAL } from '../integrations/github-app-runs';
import { appTokenForRun, type GitHubAppTokenDeps } from '../integrations/github-app-tokens';

export interface PushRunBranchDeps {
  db: PrismaClient;
  cipher: SecretCipher;
  /** Checks a repository URL against the egress rules right before git reaches it (egress/git-egress.ts). */
  planFetch: (url: string) => Promise<GitFetchPlan>;
  /** Where pull requests are opened (GITHUB_API_URL), under the same egress rules. */
  github: GitHubApi;
  /** The gateway's public API base, for the run's console link in the pull request. */
  publicApiBaseUrl: string;
  /** Installation tokens of the runs a GitHub App started (integrations/github-app-tokens.ts). */
  appTokens: GitHubAppTokenDeps;
}

type RepositorySpec = {
  url: string;
  ref?: string;
  push_secret_name?: string;
  pull_request?: PullRequestSpec;
};

const COMMIT = /^[0-9a-f]{40}$/;
/** Who the platform's commit of uncommitted work is by. */
const COMMITTER = {
  GIT_AUTHOR_NAME: 'Conveyor',
  GIT_AUTHOR_EMAIL: 'conveyor@localhost',
  GIT_COMMITTER_NAME: 'Conveyor',
  GIT_COMMITTER_EMAIL: 'conveyor@localhost',
};

const runBranchName = (runId: string): string => `conveyor/run-${runId}`;

/**
 * The push credential as git's own configuration in the environment (never on a command line, never in a URL git
 * could echo): an `Authorization: Basic` header for http(s). A secret `user:password` is used as is; a bare token is
 * sent with the user `x-access-token`, which GitHub, GitLab and Gitea accept for access tokens.
 */
function credentialEnv(secret: string): Record<string, string> {
  const userPassword = secret.includes(':') ? secret : `x-access-token:${secret}`;
  return {
    GIT_CONFIG_COUNT: '1',
    GIT_CONFIG_KEY_0: 'http.extraHeader',
    GIT_CONFIG_VALUE_0: `Authorization: Basic ${Buffer.from(userPassword).toString('base64')}`,
  };
}

/**
 * Pushes an execution's work on one repository to `conveyor/run-<run id>` (docs/harnesses.md "Where the work lands").
 * Everything happens in a fresh bare repository on the orchestrator: no working tree, no hooks (an empty template), no
 * configuration of the agent's workspace. It fetches the remote's branches, takes the agent's commits from the bundle
 * the runner made inside the sandbox (git checks its prerequisites), commits the uncommitted changes on top from the
 * patch with a scratch index, and force-pushes the result: the branch is the run's own and carries its latest
 * execution's work.
 */
export async function pushRunBranch(deps: PushRunBranchDeps, req: BranchPush): Promise<PushedBranch> {
  const run = await deps.db.$transaction((tx) =>
    lockRunForRunner(tx, req.run_id, req.execution, req.runner_id),
  );
  const repositories =
    ((run.environmentSpec ?? {}) as { repositories?: RepositorySpec[] }).repositories ?? [];
  const repo = repositories[req.repository];
  if (!repo)
    throw new AppError('invalid_request', `The run's environment has no repository ${req.repository}`);
  const shown = redactUrl(repo.url);
  if (!repo.push_secret_name)
    throw new AppError('invalid_request', `Repository ${shown} names no push_secret_name`);
  if (!COMMIT.test(req.base_commit))
    throw new AppError('invalid_request', 'base_commit must be a full commit ID');
  const field = `repositories[${req.repository}].push_secret_name`;
  const notConfigured = (message: string) =>
    new AppError('integration_not_configured', message, {
      details: { secret_name: repo.push_secret_name, repository: shown },
    });

  let secret: string | undefined;
  if (repo.push_secret_name.startsWith(GITHUB_APP_CREDENTIAL)) {
    const { owner, repo: name } = ownerAndRepo(repo.url);
    secret = await appTokenForRun(deps.appTokens, run, `${owner}/${name}`);
  } else {
    try {
      secret = await readTeamSecretValue(deps.db, deps.cipher, run.teamId, repo.push_secret_name);
    } catch (err) {
      if (!(err instanceof SecretCipherError)) throw err;
      throw notConfigured(
        `Team secret "${repo.push_secret_name}" (${field}) could not be decrypted; set its value again`,
      );
    }
    if (!secret)
      throw notConfigured(
        `Team secret "${repo.push_secret_name}" (${field}) does not exist; add a push credential for ${shown} as that team secret`,
      );
  }

  const plan = await deps.planFetch(repo.url);
  const remoteEnv = { ...plan.env, ...credentialEnv(secret) };
  const branch = runBranchName(run.id);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'conveyor-push-'));
  let commit: string;
  try {
    await git(['init', '--quiet', '--bare', '--template=', dir]);
    await git([...plan.configArgs, 'fetch', '--quiet', '--', repo.url, '+refs/heads/*:refs/heads/*'], {
      cwd: dir,
      env: remoteEnv,
    });
    let head = req.base_commit;
    if (req.bundle.length > 0) {
      await writeFile(path.join(dir, 'run.bundle'), req.bundle);
      await git(['bundle', 'verify', '--quiet', 'run.bundle'], { cwd: dir });
      await git(['fetch', '--quiet', 'run.bundle', 'HEAD'], { cwd: dir });
      head = (await git(['rev-parse', 'FETCH_HEAD'], { cwd: dir })).trim();
    }
    await git(['cat-file', '-e', `${head}^{commit}`], { cwd: dir });
    if (req.patch.length > 0) {
      await writeFile(path.join(dir, 'run.patch'), req.patch);
      const index = { GIT_INDEX_FILE: path.join(dir, 'run.index') };
      await git(['read-tree', head], { cwd: dir, env: index });
      await git(['apply', '--cached', '--binary', 'run.patch'], { cwd: dir, env: index });
      const tree = (await git(['write-tree'], { cwd: dir, env: index })).trim();
      head = (
        await git(['commit-tree', tree, '-p', head, '-m', `conveyor: run ${run.id}`], {
          cwd: dir,
          env: COMMITTER,
        })
      ).trim();
    }
    await git(
      [...plan.configArgs, 'push', '--quiet', '--force', '--', repo.url, `${head}:refs/heads/${branch}`],
      { cwd: dir, env: remoteEnv },
    );
    commit = head;
  } catch (err) {
    if (err instanceof AppError) throw err;
    const message = redactUrl((err as Error).message);
    // The remote refused the credential; anything else (unreachable, rejected push, a bad bundle) is not the key's fault.
    const refused = /authenticat|401|403|denied|could not read Username/i.test(message);
    throw new AppError(
      refused ? 'external_authentication_required' : 'resource_unavailable',
      `Pushing to ${branch} of ${shown} failed: ${message}`,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  const pushed = { branch, commit, repository_url: shown };
  if (!repo.pull_request) return pushed;
  return {
    ...pushed,
    pull_request: await pullRequestFor(deps, run, repo, repo.pull_request, branch, secret),
  };
}

/**
 * Opens the pull request the repository asks for from the branch just pushed. A refusal is an outcome, not a thrown
 * error: the branch is pushed and reported either way, and the runner fails the run with the refusal's code.
 */
async function pullRequestFor(
  deps: PushRunBranchDeps,
  run: { id: string; title: string; metadata: unknown },
  repo: RepositorySpec,
  spec: PullRequestSpec,
  branch: string,
  secret: string,
): Promise<PullRequestOutcome> {
  const link = sessionLinkOf(deps.publicApiBaseUrl, run.id);
  try {
    const opened = await openPullRequest(deps.github, apiTokenOf(secret), {
      repositoryUrl: repo.url,
      head: branch,
      spec,
      ...(repo.ref ? { ref: repo.ref } : {}),
      title: run.title || `Conveyor run ${run.id}`,
      body: `Opened by Conveyor for run ${run.id}: ${link}${linkedIssue(run.metadata)}`,
    });
    return { ...opened, error_code: '', error_message: '' };
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    return { url: '', number: 0, base: '', error_code: err.code, error_message: err.message };
  }
}

/** A run a GitHub App started on an issue closes it when its pull request merges (GitHub's closing keyword). */
function linkedIssue(metadata: unknown): string {
  const m = (metadata ?? {}) as Record<string, unknown>;
  return m.github_app_id && m.github_number ? `\n\nCloses #${String(m.github_number)}` : '';
}
