// Outgoing events benchmark (docs/events.md): BENCH_EVENT_RATE run events per second (default 1,000) for
// BENCH_SECONDS (default 10), each fanned out to BENCH_ENDPOINTS endpoints (default 10), one of which answers after
// BENCH_SLOW_MS (default 2,000 ms); then the same load with no slow endpoint. Events are written as the platform
// writes them (RunEvent rows; the trigger records deliveries) into a fresh database, and delivered by the
// orchestrator's own EventDispatcher to HTTP receivers on loopback. Reports delivery latency (receive time minus the
// event's time) p50/p99 per phase for the fast endpoints and the slow one. JSON on stdout, progress on stderr.
import http from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { createPrismaClient, type PrismaClient } from '@conveyor/db';
import { createLogger } from '@conveyor/logger';
import {
  EgressPolicy,
  encryptEndpointSecret,
  EventDispatcher,
  newEndpointSecret,
  SecretCipher,
} from '@conveyor/orchestrator';
import { createTestDatabase } from '@conveyor/testing';
import { randomBytes } from 'node:crypto';

const RATE = Number(process.env.BENCH_EVENT_RATE ?? 1000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ENDPOINTS = Number(process.env.BENCH_ENDPOINTS ?? 10);
const SLOW_MS = Number(process.env.BENCH_SLOW_MS ?? 2000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 4);
const RUNS = 5000;
const TEAM = 'team_bench';
const log = (...args: unknown[]) => console.error(...args);

interface Receiver {
  url: string;
  latencies: number[];
  close(): void;
}

/** Answers 200 after `delayMs`, recording how long after the event's time each request arrived. */
async function receiver(delayMs: number): Promise<Receiver> {
  const latencies: number[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const { timestamp } = JSON.parse(body) as { timestamp: string };
      latencies.push(Date.now() - Date.parse(timestamp));
      setTimeout(() => res.writeHead(200).end(), delayMs);
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    latencies,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

const percentile = (values: number[], p: number): number | null => {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
};

async function phase(db: PrismaClient, cipher: SecretCipher, withSlow: boolean) {
  await db.eventEndpoint.deleteMany({});
  const receivers = await Promise.all(
    Array.from({ length: ENDPOINTS }, (_, i) => receiver(withSlow && i === 0 ? SLOW_MS : 0)),
  );
  for (const [i, rx] of receivers.entries()) {
    const id = `ep_bench_${withSlow ? 's' : 'f'}_${i}`;
    await db.eventEndpoint.create({
      data: {
        id,
        teamId: TEAM,
        url: rx.url,
        eventTypes: ['*'],
        ...encryptEndpointSecret(cipher, id, newEndpointSecret()),
      },
    });
  }
  const dispatcher = new EventDispatcher({
    db,
    cipher,
    urls: { policy: new EgressPolicy(['127.0.0.0/8']), httpHosts: ['127.0.0.1'] },
    logger: createLogger({ service: 'bench', level: 'warn' }),
    publicApiBaseUrl: 'http://127.0.0.1/v1',
    schedule: [0, 5000],
    timeoutMs: 15_000,
    disableAfterMs: 24 * 3600_000,
    concurrency: CONCURRENCY,
    intervalMs: 20,
  });
  dispatcher.start();
  // Written in batches every 100 ms; each event belongs to another run, as a busy installation's would.
  const perTick = Math.round(RATE / 10);
  const total = RATE * SECONDS;
  const started = Date.now();
  for (let written = 0; written < total; written += perTick) {
    await db.$executeRaw`
      INSERT INTO "RunEvent" ("runId", kind, data)
      SELECT md5('run' || ((${written} + g) % ${RUNS}))::uuid, 'state_changed',
             '{"kind":"state_changed","from":"INPROGRESS","to":"SUCCEEDED"}'::jsonb
        FROM generate_series(1, ${perTick}) g`;
    const wait = started + ((written + perTick) / RATE) * 1000 - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }
  const writeSeconds = (Date.now() - started) / 1000;
  const fast = receivers.slice(withSlow ? 1 : 0);
  const deadline = Date.now() + 600_000;
  while (fast.some((r) => r.latencies.length < total) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 250));
    log(`delivered to fast endpoints: ${fast.map((r) => r.latencies.length).join(',')} / ${total}`);
  }
  const drainedSeconds = (Date.now() - started) / 1000;
  await dispatcher.stop();
  for (const r of receivers) r.close();
  const fastLatencies = fast.flatMap((r) => r.latencies);
  const result = {
    with_slow_endpoint: withSlow,
    events: total,
    deliveries_to_fast_endpoints: fastLatencies.length,
    write_seconds: writeSeconds,
    all_fast_delivered_after_seconds: drainedSeconds,
    fast_deliveries_per_second: Math.round(fastLatencies.length / drainedSeconds),
    fast_latency_ms: { p50: percentile(fastLatencies, 50), p99: percentile(fastLatencies, 99) },
    ...(withSlow
      ? {
          slow_delivered: receivers[0]!.latencies.length,
          slow_latency_ms: {
            p50: percentile(receivers[0]!.latencies, 50),
            p99: percentile(receivers[0]!.latencies, 99),
          },
        }
      : {}),
  };
  log(result);
  return result;
}

async function main() {
  const database = await createTestDatabase();
  const db = createPrismaClient(database.url);
  const cipher = new SecretCipher(randomBytes(32));
  try {
    await db.$executeRawUnsafe(`INSERT INTO "Team" (id, name) VALUES ('${TEAM}', 'Bench')`);
    await db.$executeRawUnsafe(`
      INSERT INTO "Run" (id, "teamId", title, prompt, "creatorId", "executorId", "conversationId", "sessionId")
      SELECT md5('run' || g)::uuid, '${TEAM}', 'bench ' || g, 'p', 'u', 'u', gen_random_uuid(), gen_random_uuid()
        FROM generate_series(0, ${RUNS - 1}) g`);
    const withSlow = await phase(db, cipher, true);
    const withoutSlow = await phase(db, cipher, false);
    console.log(
      JSON.stringify(
        {
          rate: RATE,
          seconds: SECONDS,
          endpoints: ENDPOINTS,
          slow_ms: SLOW_MS,
          concurrency_per_endpoint: CONCURRENCY,
          phases: [withSlow, withoutSlow],
        },
        null,
        2,
      ),
    );
  } finally {
    await db.$disconnect();
    await database.drop();
  }
}

void main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
