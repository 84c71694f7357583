import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { AppError } from '@conveyor/errors';
import { git } from '../egress/run-git';
import {
  remoteAccess,
  remoteFailure,
  repositoryCredential,
  runBranchName,
  runRepository,
  type RunRepositoryAccessDeps,
} from './run-repository-access';
import type { RunnerExecution } from './runner-messages';

/** The runner takes gRPC answers up to 64 MiB (packages/proto's client); a bigger repository is refused by name. */
export const MAX_BUNDLE_BYTES = 60 * 1024 * 1024;

/**
 * A repository the platform clones for the run (`clone: "platform"`, a GitHub App's): fetched here with its credential
 * into a fresh bare repository, handed to the runner as a git bundle of one branch that it clones inside the sandbox
 * without network (docs/integrations.md "Private repositories"). The branch is the run's own when it exists on the
 * remote, so a follow-up continues the pull request's head, else the repository's ref, else its default branch.
 */
export async function fetchRunRepository(
  deps: RunRepositoryAccessDeps,
  req: RunnerExecution & { repository: number },
): Promise<{ bundle: Buffer; branch: string }> {
  const { run, repo, shown } = await runRepository(deps, req);
  if (repo.clone !== 'platform')
    throw new AppError(
      'invalid_request',
      `Repository ${shown} is cloned in the sandbox, not by the platform`,
    );
  const secret = await repositoryCredential(deps, run, repo, req.repository);
  const remote = await remoteAccess(deps, repo.url, secret);
  const runBranch = runBranchName(run.id);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'conveyor-fetch-'));
  const inDir = { cwd: dir, env: remote.env };
  try {
    await git(['init', '--quiet', '--bare', '--template=', dir]);
    const advertised = await git(
      [...remote.configArgs, 'ls-remote', '--symref', '--', repo.url, 'HEAD', `refs/heads/${runBranch}`],
      inDir,
    );
    const hasRunBranch = advertised.includes(`\trefs/heads/${runBranch}\n`);
    const defaultBranch = /^ref: refs\/heads\/(\S+)\tHEAD$/m.exec(advertised)?.[1];
    const branch = hasRunBranch ? runBranch : (repo.ref ?? defaultBranch);
    if (!branch) throw new AppError('resource_unavailable', `${shown} advertises no default branch`);
    await git(
      [
        ...remote.configArgs,
        'fetch',
        '--quiet',
        '--no-tags',
        '--',
        repo.url,
        `+${branch}:refs/heads/${branch}`,
      ],
      inDir,
    );
    await git(['bundle', 'create', '--quiet', 'run.bundle', `refs/heads/${branch}`], { cwd: dir });
    const bundle = await readFile(path.join(dir, 'run.bundle'));
    if (bundle.length > MAX_BUNDLE_BYTES)
      throw new AppError(
        'payload_too_large',
        `${shown} is ${bundle.length} bytes as a bundle; the platform clones repositories up to ${MAX_BUNDLE_BYTES} bytes`,
      );
    return { bundle, branch };
  } catch (err) {
    throw remoteFailure(err, `Fetching ${shown}`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
