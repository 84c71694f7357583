import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';

/** The venv `scripts/lib/python-tools.sh` installs Schemathesis and the Python SDK into (`npm test` runs it first). */
export const VENV = process.env.CONVEYOR_VENV ?? path.resolve(__dirname, '../../../.conveyor/venv');

export function venvBin(name: string): string {
  const bin = path.join(VENV, 'bin', name);
  if (!existsSync(bin))
    throw new Error(
      `${bin} is missing: run \`npm test\` (or source scripts/lib/python-tools.sh and call ensure_python_tools)`,
    );
  return bin;
}

/** Runs a program to completion and collects its output; never rejects on a non-zero exit. */
export function runProgram(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
