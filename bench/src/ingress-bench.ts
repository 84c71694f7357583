import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startPlatform } from '@conveyor/testing';
import { runLoad } from './load';

/**
 * Webhook ingress throughput and latency with real Redis and Kafka: accepted deliveries per second and p50/p99 of
 * POST /webhooks/w/{uid} (token mode: route, streamed body with the 256 KB cap, configuration version check in
 * Redis, credential, JSON parse, rate budget, identity, dedupe reservation, publish with acks=all, dedupe mark),
 * against a bare node:http server that reads the body and answers 202, measured in the same run.
 * Env: BENCH_REQUESTS (default 5000), BENCH_CONCURRENCY (default 32), BENCH_BODY_BYTES (default 1024).
 * JSON on stdout, progress on stderr.
 */
async function main(): Promise<void> {
  const total = Number(process.env.BENCH_REQUESTS ?? 5000);
  const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 32);
  const bodyBytes = Number(process.env.BENCH_BODY_BYTES ?? 1024);
  const body = JSON.stringify({ action: 'opened', padding: 'x'.repeat(Math.max(0, bodyBytes - 40)) });

  const bare = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.on('data', () => undefined);
    req.on('end', () => {
      res.writeHead(202, { 'content-type': 'application/json' });
      res.end('{"delivery_id":"bare"}');
    });
  });
  await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', resolve));
  const bareUrl = `http://127.0.0.1:${(bare.address() as AddressInfo).port}/webhooks/w/bare`;

  process.stderr.write('starting the platform (gateway, orchestrator, ingress; no runner)…\n');
  // The per-sender budget (60 a minute) would turn a load test into a 429 test; it still runs on every request.
  const platform = await startPlatform({ env: { LOG_LEVEL: 'warn', DELIVERY_RATE_PER_MINUTE: String(10 * (total + 1000)) }, withRunner: false });
  try {
    const api = async (path: string, payload: unknown) => {
      const res = await fetch(`${platform.apiUrl}${path}`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${platform.apiKey}`, 'Content-Type': 'application/json' },
        body: JSON.stringify(payload),
      });
      if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
      return (await res.json()) as Record<string, string>;
    };
    const factory = await api('/factories', { name: 'bench' });
    const webhook = await api(`/factories/${factory.factory_id}/webhooks`, { name: 'bench' });
    const ingressUrl = webhook.ingress_url!;

    let run = 0;
    const post = (url: string, auth: boolean) => async (i: number) => {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-service-delivery-id': `bench-${run}-${i}`, ...(auth ? { authorization: `Bearer ${webhook.secret}` } : {}) },
        body,
      });
      await res.arrayBuffer();
      return res.status === 202;
    };
    process.stderr.write('warming up…\n');
    run = 1;
    await runLoad(300, concurrency, post(bareUrl, false));
    await runLoad(300, concurrency, post(ingressUrl, true));
    process.stderr.write(`measuring the bare server (${total} requests, concurrency ${concurrency})…\n`);
    run = 2;
    const baseline = await runLoad(total, concurrency, post(bareUrl, false));
    process.stderr.write('measuring the ingress…\n');
    run = 3;
    const ingress = await runLoad(total, concurrency, post(ingressUrl, true));
    console.log(
      JSON.stringify(
        {
          benchmark: 'webhook-ingress',
          requests: total,
          concurrency,
          body_bytes: Buffer.byteLength(body),
          baseline: { name: 'bare node:http server answering 202', ...baseline },
          ingress: {
            name: 'POST /webhooks/w/{uid} (token mode, Redis budgets + dedupe, Kafka acks=all)',
            ...ingress,
            acceptedPerSecond: Number(((ingress.requests - ingress.errors) / ingress.seconds).toFixed(1)),
          },
          ratios: {
            throughput: Number((ingress.throughputPerSecond / baseline.throughputPerSecond).toFixed(3)),
            p50: Number((ingress.p50Ms / baseline.p50Ms).toFixed(2)),
            p99: Number((ingress.p99Ms / baseline.p99Ms).toFixed(2)),
          },
        },
        null,
        2,
      ),
    );
  } finally {
    bare.close();
    await platform.stop();
  }
}

void main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
