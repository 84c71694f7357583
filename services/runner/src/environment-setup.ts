import path from 'node:path';
import { z } from 'zod';
import { DEFAULT_SETUP_TIMEOUT_SECONDS } from '@conveyor/environment-body';
import { redactUrl } from '@conveyor/logger';
import { SetupFailure } from './harness/harness';
import { runToCompletion } from './sandbox/collect-output';
import type { RunSandbox, SandboxExecOptions } from './sandbox/run-sandbox';

/** What the orchestrator resolves for the run's environment: repositories to clone and commands to run. */
export const environmentSchema = z.object({
  repositories: z
    .array(
      z.object({
        url: z.string().min(1),
        directory: z.string().optional(),
        ref: z.string().optional(),
        push_secret_name: z.string().optional(),
        /** `platform`: the orchestrator fetches it with its credential; the sandbox clones the bundle offline. */
        clone: z.literal('platform').optional(),
      }),
    )
    .default([]),
  setup_commands: z.array(z.string()).default([]),
  allowed_hosts: z.array(z.string()).default([]),
  docker_image: z.string().optional(),
  /** `false`: runs of this environment neither make nor use an environment snapshot (docs/snapshots.md). */
  snapshot: z.boolean().optional(),
  /** Deadline of each setup step (docs/catalog.md); absent: the default. */
  setup_timeout_seconds: z.number().int().positive().optional(),
});
export type EnvironmentSpec = z.infer<typeof environmentSchema>;

/** Where a repository is cloned, relative to the workspace. */
export const repositoryDirectory = (repo: EnvironmentSpec['repositories'][number]): string =>
  repo.directory ?? path.basename(repo.url).replace(/\.git$/, '');

/** Hosts the environment's repositories live on: a run may reach them through the egress filter to clone. */
export function repositoryHosts(spec: EnvironmentSpec): string[] {
  return spec.repositories.flatMap((r) => {
    const scp = /^[^@/]+@([^:/]+):/.exec(r.url); // git@host:owner/repo
    if (scp) return [scp[1]!];
    try {
      return [new URL(r.url).hostname];
    } catch {
      return [];
    }
  });
}

/** The output of a setup step as the run's log shows it: what the sandbox kept of it (its last 4000 bytes). */
const outputOf = (command: string, code: number | null, output: string): string => {
  const text = output.trim();
  return `${command} exited with ${code ?? 'a signal'}${text ? `:\n${text}` : ' (no output)'}`;
};

/**
 * Runs one setup step to its end or its deadline (`setup_timeout_seconds`). Past the deadline the step's process tree
 * is killed (the whole of its sandbox: its own PID namespace, even an init a step stopped) and the run fails naming
 * the step: a step that hangs, or freezes its sandbox, cannot hold the run until its wall clock runs out.
 */
export async function runSetupStep(
  sandbox: RunSandbox,
  options: SandboxExecOptions & { input?: Buffer },
  signal: AbortSignal,
  timeoutSeconds: number = DEFAULT_SETUP_TIMEOUT_SECONDS,
  step: string,
): Promise<Awaited<ReturnType<typeof runToCompletion>>> {
  const deadline = AbortSignal.timeout(timeoutSeconds * 1000);
  const result = await runToCompletion(sandbox, options, AbortSignal.any([signal, deadline]));
  if (deadline.aborted && !signal.aborted)
    throw new SetupFailure(
      `Setup step timed out after ${timeoutSeconds} s (the environment's setup_timeout_seconds) and was stopped: ${step}`,
    );
  return result;
}

/** A repository the orchestrator fetched for the run (RunnerService.FetchRunRepository): one branch as a git bundle. */
export type FetchRepository = (index: number) => Promise<{ bundle: Buffer; branch: string }>;

/**
 * Inside the sandbox, without network: the bundle (on stdin) cloned on its branch, then `origin` pointed at the
 * repository's URL (no credential: the sandbox cannot fetch a private repository itself, and has nothing to do so).
 */
const CLONE_BUNDLE = [
  'set -e',
  'bundle="$(mktemp)"',
  'trap \'rm -f "$bundle"\' EXIT',
  'cat > "$bundle"',
  'git clone --quiet --branch "$2" -- "$bundle" "$1"',
  'git -C "$1" remote set-url origin "$3"',
].join('\n');

/** How one repository is cloned: in the sandbox from its URL, or from the bundle the orchestrator fetched. */
async function cloneStep(
  repo: EnvironmentSpec['repositories'][number],
  index: number,
  dir: string,
  env: Record<string, string>,
  fetchRepository: FetchRepository | undefined,
): Promise<SandboxExecOptions & { input?: Buffer }> {
  if (repo.clone !== 'platform')
    return {
      argv: ['git', 'clone', '--quiet', ...(repo.ref ? ['--branch', repo.ref] : []), '--', repo.url, dir],
      env,
    };
  if (!fetchRepository) throw new SetupFailure(`${redactUrl(repo.url)} can only be cloned by the platform`);
  let fetched: Awaited<ReturnType<FetchRepository>>;
  try {
    fetched = await fetchRepository(index);
  } catch (err) {
    throw new SetupFailure(`Fetching ${redactUrl(repo.url)} failed: ${(err as Error).message}`);
  }
  return {
    argv: ['/bin/sh', '-c', CLONE_BUNDLE, 'clone-bundle', dir, fetched.branch, repo.url],
    env,
    stdin: 'pipe',
    network: false,
    input: fetched.bundle,
  };
}

/**
 * Clones repositories and runs setup commands in the run's sandbox (they are as untrusted as the agent); any
 * failure is a setup failure of the run. Each setup command's output (stdout and stderr) goes to the run's log
 * whether it succeeds or fails, through `report`, whose events the run's redactor has seen first.
 */
export async function setUpEnvironment(
  spec: EnvironmentSpec,
  sandbox: RunSandbox,
  env: Record<string, string>,
  signal: AbortSignal,
  report: (detail: string) => void,
  fetchRepository?: FetchRepository,
): Promise<void> {
  for (const [index, repo] of spec.repositories.entries()) {
    const dir = repositoryDirectory(repo);
    // Run events and failure messages are shown to users and logged: never a credential embedded in the URL.
    report(`cloning ${redactUrl(repo.url)}`);
    const cloned = await runSetupStep(
      sandbox,
      await cloneStep(repo, index, dir, env, fetchRepository),
      signal,
      spec.setup_timeout_seconds,
      redactUrl(`cloning ${repo.url}`),
    );
    if (cloned.code !== 0)
      throw new SetupFailure(redactUrl(`Cloning ${repo.url} failed: ${cloned.output.trim()}`));
  }
  for (const command of spec.setup_commands) {
    report(`running ${command}`);
    const result = await runSetupStep(
      sandbox,
      { argv: ['/bin/sh', '-c', command], env },
      signal,
      spec.setup_timeout_seconds,
      command,
    );
    report(outputOf(command, result.code, result.output));
    if (result.code !== 0)
      throw new SetupFailure(`Setup command failed (${command}): ${result.output.trim()}`);
  }
}
