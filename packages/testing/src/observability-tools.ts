import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/**
 * A binary `npm test` builds from the Go module proxy before the tests run (scripts/lib/observability-tools.sh),
 * where it links it: $CONVEYOR_TOOLS_DIR/bin. Missing, the test fails and says how to build it.
 */
export function observabilityTool(name: 'jaeger' | 'prometheus' | 'promtool'): string {
  const dir = process.env.CONVEYOR_TOOLS_DIR || path.join(os.homedir(), '.cache/conveyor/tools');
  const binary = path.join(dir, 'bin', name);
  if (!existsSync(binary))
    throw new Error(
      `${binary} is missing: npm test builds it (or: bash -c 'ROOT=$PWD; source scripts/lib/bootstrap.sh; ensure_observability_tools')`,
    );
  return binary;
}

export interface ToolProcess {
  logs(): string;
  /** SIGTERM, wait for the exit, remove the working directory. */
  stop(): Promise<void>;
}

/**
 * Starts one of those binaries with a temporary working directory (`args` gets its path, for configuration and
 * data) and resolves once `readyUrl` answers 2xx; fails with the tool's output if it exits or is not ready in 60 s.
 */
export async function startToolProcess(
  name: 'jaeger' | 'prometheus',
  args: (dir: string) => Promise<string[]>,
  readyUrl: string,
): Promise<ToolProcess> {
  const dir = await mkdtemp(path.join(os.tmpdir(), `${name}-`));
  const child = spawn(observabilityTool(name), await args(dir), { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    await rm(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) {
      await stop();
      throw new Error(`${name} exited with ${child.exitCode}:\n${output}`);
    }
    const ready = await fetch(readyUrl).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) return { logs: () => output, stop };
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`${name} not ready at ${readyUrl}:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}
