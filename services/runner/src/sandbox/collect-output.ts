import type { RunSandbox, SandboxExecOptions, SandboxExit } from './run-sandbox';

/** Runs one command in the sandbox to its end, keeping the last `keepBytes` of its combined output. */
export async function runToCompletion(
  sandbox: RunSandbox,
  options: SandboxExecOptions,
  signal: AbortSignal,
  keepBytes = 4000,
): Promise<SandboxExit & { output: string }> {
  const proc = sandbox.exec(options);
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
