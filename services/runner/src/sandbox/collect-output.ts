import type { RunSandbox, SandboxExecOptions, SandboxExit } from './run-sandbox';

/**
 * Runs one command in the sandbox to its end, keeping the last `keepBytes` of its combined output; `input` is written
 * to its stdin (with `stdin: 'pipe'`).
 */
export async function runToCompletion(
  sandbox: RunSandbox,
  { input, ...options }: SandboxExecOptions & { input?: Buffer },
  signal: AbortSignal,
  keepBytes = 4000,
): Promise<SandboxExit & { output: string }> {
  const proc = sandbox.exec(options);
  // A command that exits without reading it all closes the pipe: its exit status says what happened, not EPIPE.
  proc.stdin?.on('error', () => undefined);
  if (input) proc.stdin?.end(input);
  let output = '';
  const collect = (d: Buffer) => {
    output = (output + d.toString()).slice(-keepBytes);
  };
  proc.stdout.on('data', collect);
  proc.stderr.on('data', collect);
  const onAbort = () => void proc.kill();
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    const exit = await proc.exited;
    return { ...exit, output };
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

/** Waits for a sandbox process and returns its whole stdout as bytes, with the tail of its stderr. */
export async function collectBytes(
  proc: ReturnType<RunSandbox['exec']>,
): Promise<{ code: number | null; stdout: Buffer; stderr: string }> {
  const chunks: Buffer[] = [];
  let stderr = '';
  proc.stdout.on('data', (d: Buffer) => chunks.push(d));
  proc.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
  const { code } = await proc.exited;
  return { code, stdout: Buffer.concat(chunks), stderr };
}
