// Outgoing events benchmark (docs/events.md), as separate processes: the platform as it runs (startBenchPlatform:
// gateway, orchestrator with its EventDispatcher, no runner), the endpoints' receivers in their own process
// (events-receivers.ts) and the load generator in its own (events-load.ts). For each rate of BENCH_EVENT_RATES
// (default 1000; e.g. "250,500,1000" for a sweep) run events per second for BENCH_SECONDS (default 10), each fanned
// out to BENCH_ENDPOINTS endpoints (default 10, created through the API); then the same load again with the first
// endpoint answering after BENCH_SLOW_MS (default 2,000 ms), to show the slow one's effect on the others. Reports
// delivery latency (receive time minus the event's time) p50/p99 per phase for the fast endpoints and the slow one,
// deliveries per second while the load ran and until the fast endpoints had everything, and the CPU each process
// used in the phase. JSON on stdout, progress on stderr.
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { createPrismaClient, type PrismaClient } from '@conveyor/db';
import type { RunningPlatform } from '@conveyor/testing';
import {
  apiPost,
  cpuMs,
  postgresCpuMs,
  postmasterOf,
  printJson,
  progress,
  startBenchPlatform,
} from './bench-platform';

const RATES = (process.env.BENCH_EVENT_RATES ?? process.env.BENCH_EVENT_RATE ?? '1000')
  .split(',')
  .map(Number);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ENDPOINTS = Number(process.env.BENCH_ENDPOINTS ?? 10);
/** The receivers' loopback ports: BENCH_RECEIVER_BASE_PORT and the next BENCH_ENDPOINTS - 1. */
const RECEIVER_BASE_PORT = Number(process.env.BENCH_RECEIVER_BASE_PORT ?? 18600);
const SLOW_MS = Number(process.env.BENCH_SLOW_MS ?? 2000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 64);
const DRAIN_TIMEOUT_MS = Number(process.env.BENCH_DRAIN_TIMEOUT_S ?? 300) * 1000;
const RUNS = 5000;

/** The receivers and load processes forked so far: killed if the benchmark fails, not left behind. */
const children = new Set<ChildProcess>();

/** The next IPC message of `child` that has `key`. */
async function reply<T>(child: ChildProcess, key: string, ask?: string): Promise<T> {
  const answer = new Promise<T>((resolve, reject) => {
    const onMessage = (message: Record<string, unknown>) => {
      if (!(key in message)) return;
      child.off('message', onMessage);
      child.off('exit', onExit);
      resolve(message as T);
    };
    const onExit = (code: number | null) => reject(new Error(`${key}: child exited ${code}`));
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
  if (ask) child.send(ask);
  return answer;
}

const percentile = (values: number[], p: number): number | null => {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
};

/** The CPU time (ms) each process of the phase used so far. */
function cpuOf(processes: Record<string, number>, postmaster: number): Record<string, number> {
  const out: Record<string, number> = { postgres: postgresCpuMs(postmaster) };
  for (const [name, pid] of Object.entries(processes)) out[name] = cpuMs(pid);
  return out;
}

async function phase(platform: RunningPlatform, postmaster: number, rate: number, withSlow: boolean) {
  const receivers = fork(path.join(__dirname, 'events-receivers.js'), {
    env: {
      ...process.env,
      BENCH_ENDPOINTS: String(ENDPOINTS),
      BENCH_RECEIVER_BASE_PORT: String(RECEIVER_BASE_PORT),
      BENCH_SLOW_MS: String(SLOW_MS),
      BENCH_SLOW_INDEX: withSlow ? '0' : '-1',
    },
  });
  children.add(receivers);
  const { urls } = await reply<{ urls: string[] }>(receivers, 'urls');
  const endpointIds: string[] = [];
  for (const url of urls)
    endpointIds.push((await apiPost(platform, '/event-endpoints', { url, event_types: ['*'] })).endpoint_id!);

  const load = fork(path.join(__dirname, 'events-load.js'), {
    env: {
      ...process.env,
      DATABASE_URL: platform.databaseUrl,
      BENCH_RUNS: String(RUNS),
      BENCH_EVENT_RATE: String(rate),
    },
  });
  children.add(load);
  const pids = {
    orchestrator: platform.process('orchestrator')!.pid!,
    gateway: platform.process('gateway')!.pid!,
    receivers: receivers.pid!,
  };
  const cpuBefore = cpuOf(pids, postmaster);
  const started = Date.now();

  const written = await reply<{ write_seconds: number; events: number; cpu_ms: number }>(
    load,
    'write_seconds',
  );
  const total = written.events;
  const fastIndexes = urls.map((_, i) => i).filter((i) => !(withSlow && i === 0));
  const atLoadEnd = (await reply<{ counts: number[] }>(receivers, 'counts', 'counts')).counts;
  const deliveredWhileWriting = fastIndexes.reduce((sum, i) => sum + atLoadEnd[i]!, 0);
  const deadline = started + DRAIN_TIMEOUT_MS;
  let counts: number[] = [];
  do {
    await new Promise((r) => setTimeout(r, 1000));
    ({ counts } = await reply<{ counts: number[] }>(receivers, 'counts', 'counts'));
    progress(`delivered: ${counts.join(',')} / ${total}`);
  } while (fastIndexes.some((i) => counts[i]! < total) && Date.now() < deadline);
  const drainedSeconds = (Date.now() - started) / 1000;
  const cpuAfter = { ...cpuOf(pids, postmaster), load: written.cpu_ms };
  cpuBefore.load = 0;
  const cpu_ms_per_delivery = Object.fromEntries(
    Object.entries(cpuAfter).map(([name, ms]) => [
      name,
      Number(((ms - cpuBefore[name]!) / (total * urls.length)).toFixed(3)),
    ]),
  );
  const cpuSeconds =
    Object.values(cpuAfter).reduce((a, b) => a + b, 0) - Object.values(cpuBefore).reduce((a, b) => a + b, 0);
  const { latencies } = await reply<{ latencies: number[][] }>(receivers, 'latencies', 'report');
  for (const id of endpointIds)
    await fetch(`${platform.apiUrl}/event-endpoints/${id}`, {
      method: 'DELETE',
      headers: { Authorization: `Bearer ${platform.apiKey}` },
    });
  receivers.send('exit');
  await once(receivers, 'exit');

  const fast = fastIndexes.flatMap((i) => latencies[i]!);
  const perEndpoint = latencies.map((l, i) => ({
    endpoint: i,
    slow: withSlow && i === 0,
    delivered: l.length,
    p50_ms: percentile(l, 50),
    p99_ms: percentile(l, 99),
  }));
  const result = {
    rate,
    with_slow_endpoint: withSlow,
    events: total,
    write_seconds: written.write_seconds,
    offered_deliveries_per_second: rate * urls.length,
    // What the fast endpoints had received when the load stopped, per second of load.
    fast_deliveries_per_second_while_writing: Math.round(deliveredWhileWriting / written.write_seconds),
    all_fast_delivered_after_seconds: drainedSeconds,
    deliveries_to_fast_endpoints: fast.length,
    fast_deliveries_per_second: Math.round(fast.length / drainedSeconds),
    fast_latency_ms: { p50: percentile(fast, 50), p99: percentile(fast, 99) },
    per_endpoint: perEndpoint,
    // CPU of every process over the phase (ms per delivery, all endpoints) and in cores on average over it.
    cpu_ms_per_delivery,
    cpu_cores_busy: Number((cpuSeconds / 1000 / drainedSeconds).toFixed(2)),
  };
  progress(JSON.stringify(result));
  return result;
}

async function seedRuns(db: PrismaClient): Promise<void> {
  const [team] = await db.$queryRaw<Array<{ id: string }>>`SELECT id FROM "Team" WHERE id = 'team_dev'`;
  if (!team) throw new Error('the dev team (seed-dev) is missing');
  await db.$executeRaw`
    INSERT INTO "Run" (id, "teamId", title, prompt, "creatorId", "executorId", "conversationId", "sessionId")
    SELECT md5('run' || g)::uuid, 'team_dev', 'bench ' || g, 'p', 'u', 'u', gen_random_uuid(), gen_random_uuid()
      FROM generate_series(0, ${RUNS - 1}) g
    ON CONFLICT DO NOTHING`;
}

async function main() {
  const platform = await startBenchPlatform({
    EGRESS_ALLOWED_ADDRESSES: Array.from(
      { length: ENDPOINTS },
      (_, i) => `127.0.0.1:${RECEIVER_BASE_PORT + i}`,
    ).join(','),
    EVENT_HTTP_ALLOWED_HOSTS: '127.0.0.1',
    EVENT_ENDPOINT_CONCURRENCY: String(CONCURRENCY),
    EVENT_RETRY_SCHEDULE_MS: '0,5000',
  });
  const db = createPrismaClient(platform.databaseUrl);
  try {
    await seedRuns(db);
    const [backend] = await db.$queryRaw<Array<{ pid: number }>>`SELECT pg_backend_pid() AS pid`;
    const pid = postmasterOf(backend!.pid);
    const sweep = [];
    for (const rate of RATES) {
      // Without the slow endpoint first: the second phase meets warm caches, JIT and table statistics, so a slower
      // second phase is the slow endpoint's doing, not a cold start's.
      const withoutSlow = await phase(platform, pid, rate, false);
      const withSlow = await phase(platform, pid, rate, true);
      const p50 = (r: typeof withSlow) => r.fast_latency_ms.p50 ?? 0;
      const p99 = (r: typeof withSlow) => r.fast_latency_ms.p99 ?? 0;
      sweep.push({
        rate,
        phases: [withoutSlow, withSlow],
        slow_endpoint_effect_on_others_ms: {
          p50: p50(withSlow) - p50(withoutSlow),
          p99: p99(withSlow) - p99(withoutSlow),
        },
      });
    }
    printJson({
      seconds: SECONDS,
      endpoints: ENDPOINTS,
      slow_ms: SLOW_MS,
      concurrency_per_endpoint: CONCURRENCY,
      sweep,
    });
  } finally {
    await db.$disconnect();
    await platform.stop();
  }
}

void main().catch((err: unknown) => {
  console.error(err);
  for (const child of children) child.kill();
  process.exit(1);
});
