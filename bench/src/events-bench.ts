// Outgoing events benchmark (docs/events.md), as separate processes: the platform as it runs (startBenchPlatform:
// gateway, orchestrator with its EventDispatcher, no runner), the endpoints' receivers in their own process
// (events-receivers.ts) and the load generator in its own (events-load.ts). BENCH_EVENT_RATE run events per second
// (default 1,000) for BENCH_SECONDS (default 10), each fanned out to BENCH_ENDPOINTS endpoints (default 10, created
// through the API); then the same load again with the first endpoint answering after BENCH_SLOW_MS (default 2,000 ms),
// to show the slow one's effect on the others. Reports delivery latency (receive time minus the event's
// time) p50/p99 per phase for the fast endpoints and the slow one. JSON on stdout, progress on stderr.
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { createPrismaClient, type PrismaClient } from '@conveyor/db';
import type { RunningPlatform } from '@conveyor/testing';
import { apiPost, printJson, progress, startBenchPlatform } from './bench-platform';

const RATE = Number(process.env.BENCH_EVENT_RATE ?? 1000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ENDPOINTS = Number(process.env.BENCH_ENDPOINTS ?? 10);
const SLOW_MS = Number(process.env.BENCH_SLOW_MS ?? 2000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 4);
const DRAIN_TIMEOUT_MS = Number(process.env.BENCH_DRAIN_TIMEOUT_S ?? 300) * 1000;
const RUNS = 5000;

/** The next IPC message of `child` that has `key`. */
async function reply<T>(child: ChildProcess, key: string, ask?: string): Promise<T> {
  const answer = new Promise<T>((resolve, reject) => {
    const onMessage = (message: Record<string, unknown>) => {
      if (!(key in message)) return;
      child.off('message', onMessage);
      resolve(message as T);
    };
    child.on('message', onMessage);
    child.once('exit', (code) => reject(new Error(`${key}: child exited ${code}`)));
  });
  if (ask) child.send(ask);
  return answer;
}

const percentile = (values: number[], p: number): number | null => {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
};

async function phase(platform: RunningPlatform, withSlow: boolean) {
  const receivers = fork(path.join(__dirname, 'events-receivers.js'), {
    env: {
      ...process.env,
      BENCH_ENDPOINTS: String(ENDPOINTS),
      BENCH_SLOW_MS: String(SLOW_MS),
      BENCH_SLOW_INDEX: withSlow ? '0' : '-1',
    },
  });
  const { urls } = await reply<{ urls: string[] }>(receivers, 'urls');
  const endpointIds: string[] = [];
  for (const url of urls)
    endpointIds.push((await apiPost(platform, '/event-endpoints', { url, event_types: ['*'] })).endpoint_id!);

  const load = fork(path.join(__dirname, 'events-load.js'), {
    env: { ...process.env, DATABASE_URL: platform.databaseUrl, BENCH_RUNS: String(RUNS) },
  });
  const started = Date.now();
  const written = await reply<{ write_seconds: number; events: number }>(load, 'write_seconds');
  const total = written.events;
  const fastIndexes = urls.map((_, i) => i).filter((i) => !(withSlow && i === 0));
  const deadline = started + DRAIN_TIMEOUT_MS;
  let counts: number[] = [];
  do {
    await new Promise((r) => setTimeout(r, 1000));
    ({ counts } = await reply<{ counts: number[] }>(receivers, 'counts', 'counts'));
    progress(`delivered: ${counts.join(',')} / ${total}`);
  } while (fastIndexes.some((i) => counts[i]! < total) && Date.now() < deadline);
  const drainedSeconds = (Date.now() - started) / 1000;
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
    with_slow_endpoint: withSlow,
    events: total,
    write_seconds: written.write_seconds,
    all_fast_delivered_after_seconds: drainedSeconds,
    deliveries_to_fast_endpoints: fast.length,
    fast_deliveries_per_second: Math.round(fast.length / drainedSeconds),
    fast_latency_ms: { p50: percentile(fast, 50), p99: percentile(fast, 99) },
    per_endpoint: perEndpoint,
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
    EGRESS_ALLOWED_ADDRESSES: '127.0.0.0/8',
    EVENT_HTTP_ALLOWED_HOSTS: '127.0.0.1',
    EVENT_ENDPOINT_CONCURRENCY: String(CONCURRENCY),
    EVENT_RETRY_SCHEDULE_MS: '0,5000',
  });
  const db = createPrismaClient(platform.databaseUrl);
  try {
    await seedRuns(db);
    // Without the slow endpoint first: the second phase meets warm caches, JIT and table statistics, so a slower
    // second phase is the slow endpoint's doing, not a cold start's.
    const withoutSlow = await phase(platform, false);
    const withSlow = await phase(platform, true);
    const p50 = (r: typeof withSlow) => r.fast_latency_ms.p50 ?? 0;
    const p99 = (r: typeof withSlow) => r.fast_latency_ms.p99 ?? 0;
    printJson({
      rate: RATE,
      seconds: SECONDS,
      endpoints: ENDPOINTS,
      slow_ms: SLOW_MS,
      concurrency_per_endpoint: CONCURRENCY,
      phases: [withoutSlow, withSlow],
      slow_endpoint_effect_on_others_ms: {
        p50: p50(withSlow) - p50(withoutSlow),
        p99: p99(withSlow) - p99(withoutSlow),
      },
    });
  } finally {
    await db.$disconnect();
    await platform.stop();
  }
}

void main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
