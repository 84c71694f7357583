import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { AppError } from '@conveyor/errors';
import type { BranchPush, PullRequestOutcome, PushedBranch } from './runner-messages';
import type { PullRequestSpec } from '../egress/repository-url';
import { git } from '../egress/run-git';
import { sessionLinkOf } from '../events/event-body';
import { apiTokenOf, type GitHubApi } from '../github/github-rest';
import { openPullRequest } from '../github/open-pull-request';
import {
  remoteAccess,
  remoteFailure,
  repositoryCredential,
  runBranchName,
  runRepository,
  type RepositorySpec,
  type RunRepositoryAccessDeps,
} from './run-repository-access';

export interface PushRunBranchDeps extends RunRepositoryAccessDeps {
  /** Where pull requests are opened (GITHUB_API_URL), under the same egress rules. */
  github: GitHubApi;
  /** The gateway's public API base, for the run's console link in the pull request. */
  publicApiBaseUrl: string;
}

const COMMIT = /^[0-9a-f]{40}$/;
/** Who the platform's commits (uncommitted work, a merge of a moved branch) are by. */
const COMMITTER = {
  GIT_AUTHOR_NAME: 'Conveyor',
  GIT_AUTHOR_EMAIL: 'conveyor@localhost',
  GIT_COMMITTER_NAME: 'Conveyor',
  GIT_COMMITTER_EMAIL: 'conveyor@localhost',
};
/** Pushes tried when the branch keeps moving between the fetch and the push (each one merges what moved). */
const PUSH_ATTEMPTS = 3;
/** git's words for a push the remote refused because it is not a fast-forward. */
const NOT_FAST_FORWARD = /non-fast-forward|fetch first|rejected/i;

/**
 * Pushes an execution's work on one repository to `conveyor/run-<run id>` (docs/harnesses.md "Where the work lands").
 * Everything happens in a fresh bare repository on the orchestrator: no working tree, no hooks (an empty template), no
 * configuration of the agent's workspace. It fetches the remote's branches, takes the agent's commits from the bundle
 * the runner made inside the sandbox (git checks its prerequisites), commits the uncommitted changes on top from the
 * patch with a scratch index, and pushes the result as a fast-forward only: never `--force`, never another branch.
 */
export async function pushRunBranch(deps: PushRunBranchDeps, req: BranchPush): Promise<PushedBranch> {
  const { run, repo, shown } = await runRepository(deps, req);
  if (!repo.push_secret_name)
    throw new AppError('invalid_request', `Repository ${shown} names no push_secret_name`);
  if (!COMMIT.test(req.base_commit))
    throw new AppError('invalid_request', 'base_commit must be a full commit ID');
  const secret = await repositoryCredential(deps, run, repo, req.repository);
  const remote = await remoteAccess(deps, repo.url, secret);
  const branch = runBranchName(run.id);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'conveyor-push-'));
  const inDir = { cwd: dir, env: remote.env };
  let commit: string;
  try {
    await git(['init', '--quiet', '--bare', '--template=', dir]);
    await git(
      [...remote.configArgs, 'fetch', '--quiet', '--', repo.url, '+refs/heads/*:refs/heads/*'],
      inDir,
    );
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
        await git(['commit-tree', tree, '-p', head, '-m', workCommitMessage(run.id, req.execution)], {
          cwd: dir,
          env: COMMITTER,
        })
      ).trim();
    }
    for (let attempt = 1; ; attempt++) {
      head = await onTopOfBranch(dir, branch, head, run.id);
      try {
        // No --force: the remote takes the branch only as a fast-forward of what it holds.
        await git(
          [...remote.configArgs, 'push', '--quiet', '--', repo.url, `${head}:refs/heads/${branch}`],
          inDir,
        );
        break;
      } catch (err) {
        if (attempt >= PUSH_ATTEMPTS || !NOT_FAST_FORWARD.test((err as Error).message)) throw err;
        // Someone pushed to the branch meanwhile: take their commits and merge again.
        await git(
          [
            ...remote.configArgs,
            'fetch',
            '--quiet',
            '--',
            repo.url,
            `+refs/heads/${branch}:refs/heads/${branch}`,
          ],
          inDir,
        );
      }
    }
    commit = head;
  } catch (err) {
    throw remoteFailure(err, `Pushing to ${branch} of ${shown}`);
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
 * The subject of the commit holding an execution's uncommitted changes. A later execution's names its number: two
 * executions that leave the same changes on the same base within one second would otherwise make the very same commit
 * object, and whether a follow-up's work shows as a merge on the branch would depend on the clock.
 */
const workCommitMessage = (runId: string, execution: number) =>
  execution > 1 ? `conveyor: run ${runId}, execution ${execution}` : `conveyor: run ${runId}`;

/**
 * The execution's work as a fast-forward of the run's branch on the remote. A branch that does not exist yet, or that
 * the work already descends from (a follow-up continues the pull request's head), takes it as is. A branch that moved
 * under the execution (someone pushed to the pull request, or an execution that started from the base before) is
 * merged into the work, so their commits survive; when both changed the same lines the push fails with `conflict`
 * rather than dropping either side.
 */
async function onTopOfBranch(dir: string, branch: string, head: string, runId: string): Promise<string> {
  const ref = `refs/heads/${branch}`;
  const tip = (await git(['for-each-ref', '--format=%(objectname)', ref], { cwd: dir })).trim();
  if (!tip || tip === head) return head;
  const contained = await git(['merge-base', '--is-ancestor', tip, head], { cwd: dir }).then(
    () => true,
    () => false,
  );
  if (contained) return head;
  let tree: string;
  try {
    tree = (await git(['merge-tree', '--write-tree', '--no-messages', head, tip], { cwd: dir })).split(
      '\n',
    )[0]!;
  } catch {
    throw new AppError(
      'conflict',
      `${branch} moved since this execution started (its head is now ${tip}) and the work conflicts with the new commits; nothing was pushed (the platform never force-pushes)`,
      { details: { reason: 'branch_moved', branch, head: tip } },
    );
  }
  return (
    await git(
      ['commit-tree', tree, '-p', head, '-p', tip, '-m', `conveyor: run ${runId}, merged with ${branch}`],
      {
        cwd: dir,
        env: COMMITTER,
      },
    )
  ).trim();
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
