import { collectBytes as collect } from '../../sandbox/collect-output';
import type { RunSandbox } from '../../sandbox/run-sandbox';

/**
 * Files of the run's HOME are written and read by processes inside the sandbox, never by the runner on the host:
 * the agent owns that directory and may have replaced any path in it with a symlink (to /etc/shadow, the runner's
 * keys); inside the sandbox such a link reaches only what the agent could read or write anyway.
 */

export async function writeSandboxFile(
  sandbox: RunSandbox,
  env: Record<string, string>,
  path: string,
  content: string | Buffer,
): Promise<void> {
  const proc = sandbox.exec({
    argv: ['/bin/sh', '-c', 'mkdir -p -- "$(dirname -- "$1")" && cat > "$1"', 'sh', path],
    env,
    stdin: 'pipe',
    network: false,
  });
  proc.stdin?.end(content);
  const { code, stderr } = await collect(proc);
  if (code !== 0) throw new Error(`could not write ${path} in the sandbox: ${stderr.trim()}`);
}

/** The most recently modified file matching a shell glob, with its path, or undefined when none does. */
export async function readSandboxFile(
  sandbox: RunSandbox,
  env: Record<string, string>,
  glob: string,
): Promise<{ path: string; content: Buffer } | undefined> {
  // IFS= keeps a path with spaces whole while the unquoted $1 still expands as a glob. The path comes first, ended by NUL.
  const script =
    'IFS=; set -- $1; [ -f "$1" ] || exit 3; f="$(ls -t -- "$@" | head -n 1)"; printf "%s\\0" "$f"; exec cat -- "$f"';
  const { code, stdout, stderr } = await collect(
    sandbox.exec({ argv: ['/bin/sh', '-c', script, 'sh', glob], env, network: false }),
  );
  if (code === 3) return undefined;
  if (code !== 0) throw new Error(`could not read ${glob} in the sandbox: ${stderr.trim()}`);
  const end = stdout.indexOf(0);
  return { path: stdout.subarray(0, end).toString('utf8'), content: stdout.subarray(end + 1) };
}
