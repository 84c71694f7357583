import { spawn } from 'node:child_process';
import path from 'node:path';
import { z } from 'zod';
import { SetupFailure } from './harness/harness';

/** What the orchestrator resolves for the run's environment: repositories to clone and commands to run. */
export const environmentSchema = z.object({
  repositories: z.array(z.object({ url: z.string().min(1), directory: z.string().optional(), ref: z.string().optional() })).default([]),
  setup_commands: z.array(z.string()).default([]),
});
export type EnvironmentSpec = z.infer<typeof environmentSchema>;

function run(command: string, args: string[], cwd: string, signal: AbortSignal): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd, signal, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const collect = (d: Buffer) => {
      output = (output + d.toString()).slice(-4000);
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    child.on('error', (err) => resolve({ code: -1, output: err.message }));
    child.on('close', (code) => resolve({ code, output }));
  });
}

/** Clones repositories and runs setup commands in the workspace; any failure is a setup failure of the run. */
export async function setUpEnvironment(spec: EnvironmentSpec, workspaceDir: string, signal: AbortSignal, report: (detail: string) => void): Promise<void> {
  for (const repo of spec.repositories) {
    const dir = repo.directory ?? path.basename(repo.url).replace(/\.git$/, '');
    report(`cloning ${repo.url}`);
    const args = ['clone', '--quiet', ...(repo.ref ? ['--branch', repo.ref] : []), repo.url, dir];
    const cloned = await run('git', args, workspaceDir, signal);
    if (cloned.code !== 0) throw new SetupFailure(`Cloning ${repo.url} failed: ${cloned.output.trim()}`);
  }
  for (const command of spec.setup_commands) {
    report(`running ${command}`);
    const result = await run('/bin/sh', ['-c', command], workspaceDir, signal);
    if (result.code !== 0) throw new SetupFailure(`Setup command failed (${command}): ${result.output.trim()}`);
  }
}
