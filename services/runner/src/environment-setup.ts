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
  options: SandboxExecOptions,
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
): Promise<void> {
  for (const repo of spec.repositories) {
    const dir = repositoryDirectory(repo);
    // Run events and failure messages are shown to users and logged: never a credential embedded in the URL.
    report(`cloning ${redactUrl(repo.url)}`);
    const argv: [string, ...string[]] = [
      'git',
      'clone',
      '--quiet',
      ...(repo.ref ? ['--branch', repo.ref] : []),
      '--',
      repo.url,
      dir,
    ];
    const cloned = await runSetupStep(
      sandbox,
      { argv, env },
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
