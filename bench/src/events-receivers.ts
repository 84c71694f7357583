// The event endpoints of bench:events, in their own process (forked by events-bench.ts): one HTTP receiver per
// endpoint on loopback, answering 200 at once or, for the slow one, after BENCH_SLOW_MS. Each records how long after
// the event's time (the body's `timestamp`, written by PostgreSQL) its requests arrived. IPC: sends {urls} when
// listening; answers 'report' with every receiver's latencies.
import http from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';

const COUNT = Number(process.env.BENCH_ENDPOINTS ?? 10);
const SLOW_MS = Number(process.env.BENCH_SLOW_MS ?? 2000);
/** Index of the slow endpoint; -1 for none. */
const SLOW_INDEX = Number(process.env.BENCH_SLOW_INDEX ?? -1);
/** Receiver i listens on this + i: the platform allows exactly these loopback ports (EGRESS_ALLOWED_ADDRESSES). */
const BASE_PORT = Number(process.env.BENCH_RECEIVER_BASE_PORT);

async function receiver(port: number, delayMs: number): Promise<{ url: string; latencies: number[] }> {
  const latencies: number[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const { timestamp } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { timestamp: string };
      latencies.push(Date.now() - Date.parse(timestamp));
      if (delayMs > 0) setTimeout(() => res.writeHead(200).end(), delayMs);
      else res.writeHead(200).end();
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, latencies };
}

async function main() {
  const receivers = await Promise.all(
    Array.from({ length: COUNT }, (_, i) => receiver(BASE_PORT + i, i === SLOW_INDEX ? SLOW_MS : 0)),
  );
  process.on('message', (message) => {
    if (message === 'report') process.send!({ latencies: receivers.map((r) => r.latencies) });
    if (message === 'counts') process.send!({ counts: receivers.map((r) => r.latencies.length) });
    if (message === 'exit') process.exit(0);
  });
  process.send!({ urls: receivers.map((r) => r.url) });
}

void main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
