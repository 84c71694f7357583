import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { TurnCheckpoints, type RunSandbox } from '@conveyor/runner';
import { startBwrapBackend } from './bwrap-bench-backend';

// The cost of a lost agent's resumption point (docs/run-lifecycle.md "Lost agents"): the runner's checkpoint after
// each model turn — a tar of the whole workspace copied out of the sandbox into the runner's state directory — for a
// workspace of BENCH_WORKSPACE_MB (100) in files of BENCH_FILE_KB (256), random (incompressible) bytes; plus one
// restore into a fresh sandbox. BENCH_LAYOUT=mixed fills it as a repository with its dependencies looks instead: half
// the bytes in 4 KiB text files, 100 to a directory, 30 % in 64 KiB files, 20 % in 2 MiB binaries (tar does not
// compress, so the file count is what differs). Needs root: it forks the privileged helper and stays root itself.

const TURNS = Number(process.env.BENCH_TURNS ?? 10);
const WORKSPACE_MB = Number(process.env.BENCH_WORKSPACE_MB ?? 100);
const FILE_KB = Number(process.env.BENCH_FILE_KB ?? 256);
const LAYOUT = process.env.BENCH_LAYOUT === 'mixed' ? 'mixed' : 'uniform';

/** `[directory, file size in KiB, count, content source]` groups filling the workspace. */
function layout(): Array<[string, number, number, string]> {
  const kb = WORKSPACE_MB * 1024;
  if (LAYOUT === 'uniform') return [['src', FILE_KB, Math.ceil(kb / FILE_KB), '/dev/urandom']];
  return [
    ['text', 4, Math.ceil((kb * 0.5) / 4), 'text'],
    ['assets', 64, Math.ceil((kb * 0.3) / 64), '/dev/urandom'],
    ['bin', 2048, Math.ceil((kb * 0.2) / 2048), '/dev/urandom'],
  ];
}

/** A shell loop writing `count` files of `sizeKb`, 100 to a directory; `text`: base64 lines, as source is. */
const fill = ([dir, sizeKb, count, source]: [string, number, number, string]) => {
  const content =
    source === 'text'
      ? `head -c ${(sizeKb * 1024 * 3) / 4} /dev/urandom | base64 -w 76`
      : `head -c ${sizeKb * 1024} ${source}`;
  return `i=0; while [ $i -lt ${count} ]; do d=${dir}/d$((i / 100)); mkdir -p $d; ${content} > $d/f$i; i=$((i+1)); done`;
};
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
  const groups = layout();
  const files = groups.reduce((n, [, , count]) => n + count, 0);
  process.stderr.write(`filling the workspace (${LAYOUT}): ${files} files…\n`);
  for (const group of groups) await run(sandbox, fill(group));
  const [changedDir, changedKb, changedCount] = groups.at(-1)!;
  const checkpoint = checkpoints.of(first.runId);
  const takes: number[] = [];
  for (let turn = 1; turn <= TURNS; turn++) {
    // Each turn changes a file, as an agent's step would.
    const changed = turn % changedCount;
    await run(
      sandbox,
      `head -c ${changedKb * 1024} /dev/urandom > ${changedDir}/d${Math.floor(changed / 100)}/f${changed}`,
    );
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
        layout: LAYOUT,
        files,
        ...(LAYOUT === 'uniform' ? { file_kb: FILE_KB } : {}),
        load_average: os.loadavg().map(round),
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
