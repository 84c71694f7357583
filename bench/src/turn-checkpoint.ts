import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { TurnCheckpoints, type RunSandbox } from '@conveyor/runner';
import { startBwrapBackend } from './bwrap-bench-backend';

// The cost of a lost agent's resumption point (docs/run-lifecycle.md "Lost agents"): the runner's checkpoint after
// each model turn — a tar of the whole workspace copied out of the sandbox into the runner's state directory — for a
// workspace of BENCH_WORKSPACE_MB (100) in files of BENCH_FILE_KB (256), random (incompressible) bytes; plus one
// restore into a fresh sandbox. Needs root: it forks the privileged helper and stays root itself.

const TURNS = Number(process.env.BENCH_TURNS ?? 10);
const WORKSPACE_MB = Number(process.env.BENCH_WORKSPACE_MB ?? 100);
const FILE_KB = Number(process.env.BENCH_FILE_KB ?? 256);
const ENV = { PATH: '/usr/bin:/bin', HOME: '/tmp' };

const round = (n: number) => Math.round(n * 10) / 10;

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

async function run(sandbox: RunSandbox, script: string): Promise<void> {
  const proc = sandbox.exec({ argv: ['/bin/sh', '-c', script], env: ENV, network: false });
  proc.stdout.resume();
  proc.stderr.resume();
  const exit = await proc.exited;
  if (exit.code !== 0) throw new Error(`${script} exited ${exit.code}`);
}

async function main(): Promise<void> {
  const { root, helper, backend } = await startBwrapBackend('bench-checkpoint-');
  const policy = () => ({
    runId: randomUUID(),
    allowedHosts: [],
    endpoints: [],
    limits: {
      wallClockMs: 3_600_000,
      maxProcesses: 256,
      memoryBytes: 1024 ** 3,
      diskBytes: (4 * WORKSPACE_MB + 512) * 1024 ** 2,
    },
  });
  const checkpoints = new TurnCheckpoints(path.join(root, 'checkpoints'));
  const first = policy();
  const sandbox = await backend.prepare(first);
  const files = Math.ceil((WORKSPACE_MB * 1024) / FILE_KB);
  process.stderr.write(`filling the workspace: ${files} files of ${FILE_KB} KiB…\n`);
  await run(
    sandbox,
    `mkdir -p src && i=0; while [ $i -lt ${files} ]; do head -c ${FILE_KB * 1024} /dev/urandom > src/f$i; i=$((i+1)); done`,
  );
  const checkpoint = checkpoints.of(first.runId);
  const takes: number[] = [];
  for (let turn = 1; turn <= TURNS; turn++) {
    // Each turn changes a file, as an agent's step would.
    await run(sandbox, `head -c ${FILE_KB * 1024} /dev/urandom > src/f${turn % files}`);
    takes.push(await timed(() => checkpoint.take(sandbox, ENV, turn)));
  }
  const record = await checkpoint.latest();
  const fresh = await backend.prepare(policy());
  const restoreMs = await timed(() => checkpoint.restore(fresh, ENV));
  await fresh.destroy();
  await sandbox.destroy();
  helper.stop();
  await rm(root, { recursive: true, force: true });
  const sorted = [...takes].sort((a, b) => a - b);
  process.stdout.write(
    `${JSON.stringify(
      {
        benchmark: 'turn-checkpoint',
        backend: backend.name,
        workspace_mb: WORKSPACE_MB,
        file_kb: FILE_KB,
        turns: TURNS,
        checkpoint_bytes: record?.bytes,
        take_ms: {
          p50: round(sorted[Math.floor(sorted.length / 2)]!),
          max: round(sorted[sorted.length - 1]!),
        },
        restore_ms: round(restoreMs),
      },
      null,
      2,
    )}\n`,
  );
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
