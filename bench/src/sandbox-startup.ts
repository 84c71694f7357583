import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import type { RunSandbox } from '@conveyor/runner';
import { startBwrapBackend } from './bwrap-bench-backend';

// Start-up cost of the local run sandbox (docs/sandbox.md): an empty command (`/bin/true`) spawned directly vs.
// through `RunSandbox.exec` (cgroup join, prlimit, setpriv, bwrap with every namespace, the socat forwarders of the
// egress proxy and one endpoint), interleaved in one run; plus a whole sandbox's prepare + destroy (the run's own
// filesystem of RUN_DISK_MB, default 10 GiB, mounted and released). Needs root: it forks the privileged helper and
// stays root itself.

const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 200);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 10);

const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
const summary = (samples: number[]) => {
  const sorted = [...samples].sort((a, b) => a - b);
  const round = (n: number) => Math.round(n * 100) / 100;
  return {
    n: sorted.length,
    p50_ms: round(quantile(sorted, 0.5)),
    p99_ms: round(quantile(sorted, 0.99)),
    max_ms: round(sorted[sorted.length - 1]!),
  };
};

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

const outside = () =>
  new Promise<void>((resolve, reject) => {
    const child = spawn('/bin/true', [], { stdio: 'ignore', env: { PATH: '/usr/bin:/bin' } });
    child.once('error', reject);
    child.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`exit ${code}`))));
  });

async function inside(sandbox: RunSandbox): Promise<void> {
  const proc = sandbox.exec({ argv: ['/bin/true'], env: { PATH: '/usr/bin:/bin' } });
  proc.stdout.resume();
  proc.stderr.resume();
  const exit = await proc.exited;
  if (exit.code !== 0) throw new Error(`sandboxed /bin/true exited ${exit.code}`);
}

async function main(): Promise<void> {
  const { root, helper, backend } = await startBwrapBackend('bench-sandbox-');
  const diskBytes = Number(process.env.RUN_DISK_MB ?? 10 * 1024) * 1024 ** 2;
  const policy = async () => ({
    runId: randomUUID(),
    allowedHosts: [],
    endpoints: [{ name: 'model', target: { host: '127.0.0.1', port: 9 } }],
    limits: { wallClockMs: 3_600_000, maxProcesses: 256, memoryBytes: 1024 ** 3, diskBytes },
  });
  const sandbox = await backend.prepare(await policy());
  const samples = { outside: [] as number[], inside: [] as number[], prepareDestroy: [] as number[] };
  for (let i = 0; i < WARMUP; i++) {
    await outside();
    await inside(sandbox);
  }
  process.stderr.write(`measuring ${ITERATIONS} iterations…\n`);
  for (let i = 0; i < ITERATIONS; i++) {
    samples.outside.push(await timed(outside));
    samples.inside.push(await timed(() => inside(sandbox)));
  }
  await sandbox.destroy();
  for (let i = 0; i < Math.max(10, Math.floor(ITERATIONS / 10)); i++) {
    const p = await policy();
    samples.prepareDestroy.push(await timed(async () => (await backend.prepare(p)).destroy()));
  }
  helper.stop();
  await rm(root, { recursive: true, force: true });
  const outsideStats = summary(samples.outside);
  const insideStats = summary(samples.inside);
  process.stdout.write(
    `${JSON.stringify(
      {
        benchmark: 'sandbox-startup',
        backend: backend.name,
        iterations: ITERATIONS,
        empty_command_outside: outsideStats,
        empty_command_inside: insideStats,
        overhead_ms: {
          p50: Math.round((insideStats.p50_ms - outsideStats.p50_ms) * 100) / 100,
          p99: Math.round((insideStats.p99_ms - outsideStats.p99_ms) * 100) / 100,
        },
        sandbox_prepare_and_destroy: summary(samples.prepareDestroy),
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
