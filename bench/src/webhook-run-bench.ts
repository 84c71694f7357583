import { createPrismaClient } from '@conveyor/db';
import { runAutocannon } from './autocannon-target';
import {
  reportServerErrors,
  DURATION_SECONDS,
  apiPost,
  printJson,
  progress,
  startBenchPlatform,
} from './bench-platform';
import { DeliveryProgress } from './delivery-progress';

const RATE = Number(process.env.BENCH_RATE ?? 100);

/**
 * Webhook accepted → run QUEUED at a steady BENCH_RATE deliveries/s (default 100) for BENCH_DURATION_SECONDS, each
 * matching one automation: per delivery, from the ingress's receivedAt (stamped when the request arrived) to the
 * run's createdAt (it is created QUEUED), both written by the platform itself. The load is open loop and evenly
 * spaced (paced-load-worker, its own process); BENCH_PACING=burst uses autocannon's rate limit instead, which sends
 * each second's deliveries back to back at its start.
 */
async function main(): Promise<void> {
  progress('starting the platform (no runner, so runs stay queued)…');
  const platform = await startBenchPlatform({ DELIVERY_RATE_PER_MINUTE: '100000000' });
  const watch = new DeliveryProgress(platform);
  const db = createPrismaClient(platform.databaseUrl);
  try {
    await watch.connect();
    const factory = await apiPost(platform, '/factories', { name: 'bench' });
    const webhook = await apiPost(platform, `/factories/${factory.factory_id}/webhooks`, { name: 'bench' });
    const trigger = {
      provider: 'webhook',
      event: 'received',
      filter: { webhook_ids: [webhook.webhook_uid], payload: { action: ['opened'] } },
    };
    await apiPost(platform, `/factories/${factory.factory_id}/automations`, {
      name: 'bench',
      prompt: 'Triage the issue in the payload.',
      trigger,
    });
    progress(`sending ${RATE} deliveries/s for ${DURATION_SECONDS} s…`);
    const load = await runAutocannon({
      url: webhook.ingress_url!,
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${webhook.secret}` },
      body: JSON.stringify({ action: 'opened', issue: { number: 7, title: 'benchmark' } }),
      connections: Math.max(1, Math.ceil(RATE / 10)),
      durationSeconds: DURATION_SECONDS,
      overallRate: RATE,
      paced: process.env.BENCH_PACING !== 'burst',
      expectStatus: 202,
      uniqueHeader: { name: 'x-service-delivery-id', prefix: 'run' },
    });
    progress(`${load.expected} accepted; waiting for the runs…`);
    await watch.drain(600);
    const deadline = Date.now() + 600_000;
    while (Date.now() < deadline) {
      const [row] = await db.$queryRaw<
        Array<{ n: bigint }>
      >`SELECT count(*) AS n FROM "WebhookDelivery" WHERE label = 'Accepted' AND "processedAt" IS NULL`;
      if (Number(row!.n) === 0) break;
      await new Promise((r) => setTimeout(r, 1000));
    }
    const [stats] = await db.$queryRaw<Array<Record<string, number | bigint | null>>>`
      SELECT count(*) AS deliveries, count(r.id) AS runs,
             percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM r."createdAt" - d."receivedAt") * 1000) AS p50_ms,
             percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM r."createdAt" - d."receivedAt") * 1000) AS p99_ms,
             max(extract(epoch FROM r."createdAt" - d."receivedAt") * 1000) AS max_ms,
             percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM d."createdAt" - d."receivedAt") * 1000) AS recorded_p50_ms,
             percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM d."createdAt" - d."receivedAt") * 1000) AS recorded_p99_ms
        FROM "WebhookDelivery" d LEFT JOIN "Run" r ON r.id::text = d."runIds"[1]
       WHERE d.label = 'Accepted'`;
    const num = (v: unknown) => (v === null || v === undefined ? null : Number(Number(v).toFixed(1)));
    reportServerErrors(platform, [load]);
    printJson({
      benchmark: 'webhook-to-run',
      rate_per_second: RATE,
      duration_seconds: DURATION_SECONDS,
      load: { name: 'POST /webhooks/w/{uid}, each matching one automation', ...load },
      accepted_to_queued: {
        name: 'WebhookDelivery.receivedAt (ingress) → Run.createdAt (QUEUED)',
        deliveries: num(stats!.deliveries),
        runs: num(stats!.runs),
        p50_ms: num(stats!.p50_ms),
        p99_ms: num(stats!.p99_ms),
        max_ms: num(stats!.max_ms),
        // The first stage alone: ingress → Kafka → consumer → the delivery log row (WebhookDelivery.createdAt).
        recorded_p50_ms: num(stats!.recorded_p50_ms),
        recorded_p99_ms: num(stats!.recorded_p99_ms),
      },
    });
  } finally {
    await watch.close();
    await db.$disconnect();
    await platform.stop();
  }
}

void main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
