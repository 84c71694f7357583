import { AppError } from '@conveyor/errors';
import { redactUrl } from '@conveyor/logger';
import type { PushRunBranchResponse__Output } from '@conveyor/proto';
import { repositoryDirectory, type EnvironmentSpec } from './environment-setup';
import type { EventReporter } from './event-reporter';
import type { OrchestratorLink } from './orchestrator-link';
import { collectBytes } from './sandbox/collect-output';
import type { RunSandbox } from './sandbox/run-sandbox';
import { BASE_COMMIT } from './workspace-changes';

/** What one PushRunBranch call may carry: the orchestrator's gRPC server takes messages up to 8 MiB. */
const MAX_PUSH_BYTES = 7 * 1024 * 1024;

/**
 * Inside the sandbox (the workspace and its git configuration are the agent's): the base commit and HEAD, the agent's
 * commits as a bundle, and the uncommitted changes as a patch against HEAD (a scratch index leaves the repository's
 * own alone; no external diff drivers or text conversion, fixed prefixes whatever the repository configures).
 */
const REVS_SCRIPT = `dir="$1"; base="$(${BASE_COMMIT})" || exit 3; printf '%s %s' "$base" "$(git -C "$dir" rev-parse -q --verify HEAD)"`;
const BUNDLE_SCRIPT = `git -C "$1" bundle create -q - "$2..HEAD"`;
const UNCOMMITTED_SCRIPT = `
dir="$1"; index="$(mktemp)"
GIT_INDEX_FILE="$index" git -C "$dir" read-tree HEAD &&
  GIT_INDEX_FILE="$index" git -C "$dir" add -A &&
  GIT_INDEX_FILE="$index" git -C "$dir" diff --cached --binary --no-ext-diff --no-textconv --src-prefix=a/ --dst-prefix=b/ HEAD
status=$?; rm -f "$index"; exit "$status"
`;

type PushedBranch = PushRunBranchResponse__Output & { directory: string };
type PushTarget = { run_id: string; execution: number; runner_id: string };

async function inSandbox(
  sandbox: RunSandbox,
  env: Record<string, string>,
  what: string,
  script: string,
  args: string[],
): Promise<Buffer> {
  const { code, stdout, stderr } = await collectBytes(
    sandbox.exec({ argv: ['/bin/sh', '-c', script, 'run-branch', ...args], env }),
  );
  if (code !== 0)
    throw new AppError(
      'invalid_request',
      `${what} failed in the sandbox: ${stderr.trim() || `exit ${code}`}`,
    );
  return stdout;
}

/**
 * Pushes the execution's work on each repository that names a `push_secret_name` to `conveyor/run-<run id>`: the
 * runner collects the commits (a bundle) and the uncommitted changes (a patch) inside the sandbox, and the orchestrator
 * pushes them from a fresh bare clone with the team's credential, which never reaches the runner or the sandbox
 * (docs/harnesses.md). Throws an AppError naming the repository when one cannot be pushed.
 */
async function pushRunBranches(
  link: Pick<OrchestratorLink, 'call'>,
  target: PushTarget,
  sandbox: RunSandbox,
  env: Record<string, string>,
  environment: EnvironmentSpec,
): Promise<PushedBranch[]> {
  const pushed: PushedBranch[] = [];
  for (const [index, repo] of environment.repositories.entries()) {
    if (!repo.push_secret_name) continue;
    const dir = repositoryDirectory(repo);
    const [base = '', head = ''] = (
      await inSandbox(sandbox, env, `Reading ${dir}'s commits`, REVS_SCRIPT, [dir])
    )
      .toString('utf8')
      .split(' ');
    const bundle =
      base === head
        ? Buffer.alloc(0)
        : await inSandbox(sandbox, env, `Bundling ${dir}'s commits`, BUNDLE_SCRIPT, [dir, base]);
    const patch = await inSandbox(
      sandbox,
      env,
      `Collecting ${dir}'s uncommitted changes`,
      UNCOMMITTED_SCRIPT,
      [dir],
    );
    if (bundle.length + patch.length > MAX_PUSH_BYTES) {
      throw new AppError(
        'payload_too_large',
        `The work on ${redactUrl(repo.url)} (${bundle.length + patch.length} bytes) exceeds the ${MAX_PUSH_BYTES}-byte push limit`,
      );
    }
    const result = await link.call(
      'PushRunBranch',
      { ...target, repository: index, base_commit: base, bundle, patch },
      120_000,
    );
    pushed.push({ ...result, directory: dir });
  }
  return pushed;
}

/**
 * Pushes the execution's work where the environment asks (repositories with a `push_secret_name`) and reports each
 * branch as an EXTERNAL_REFERENCE artifact (`git_branch`), and each pull request the orchestrator opened from one as a
 * PULL_REQUEST artifact. Returns why a push or a pull request failed, or undefined.
 */
export async function pushWorkToBranches(
  link: Pick<OrchestratorLink, 'call'>,
  target: PushTarget,
  sandbox: RunSandbox,
  env: Record<string, string>,
  environment: EnvironmentSpec,
  reporter: Pick<EventReporter, 'emit'>,
): Promise<{ message: string; errorCode: string } | undefined> {
  if (!environment.repositories.some((r) => r.push_secret_name)) return undefined;
  let failure: { message: string; errorCode: string } | undefined;
  try {
    for (const branch of await pushRunBranches(link, target, sandbox, env, environment)) {
      const url = `${branch.repository_url.replace(/\.git$/, '')}/tree/${branch.branch}`;
      const metadata = { repository: branch.repository_url, branch: branch.branch, commit: branch.commit };
      reporter.emit({
        kind: 'artifact',
        artifact_type: 'EXTERNAL_REFERENCE',
        data: { reference_type: 'git_branch', url, title: branch.branch, metadata },
      });
      reporter.emit({
        kind: 'log',
        level: 'info',
        text: `Pushed the work on ${branch.directory} to ${branch.branch} (${branch.commit})`,
      });
      const pr = branch.pull_request;
      if (pr?.url) {
        reporter.emit({
          kind: 'artifact',
          artifact_type: 'PULL_REQUEST',
          data: { url: pr.url, branch: branch.branch, base: pr.base, number: pr.number },
        });
        reporter.emit({ kind: 'log', level: 'info', text: `Opened pull request ${pr.url}` });
      } else if (pr) {
        // The branch is pushed and reported above; only the pull request is missing.
        failure ??= {
          message: `The pull request from ${branch.branch} was not opened: ${pr.error_message}`,
          errorCode: pr.error_code,
        };
        reporter.emit({ kind: 'log', level: 'error', text: failure.message });
      }
    }
    return failure;
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    const message = `The agent's work was not pushed: ${err.message}`;
    reporter.emit({ kind: 'log', level: 'error', text: message });
    return { message, errorCode: err.code };
  }
}
