import { ratios, runAutocannon, type AutocannonTarget } from './autocannon-target';
import { startBaseline } from './baseline-server';
import {
  reportServerErrors,
  CONNECTIONS,
  DURATION_SECONDS,
  WARMUP_SECONDS,
  apiPost,
  printJson,
  progress,
  startBenchPlatform,
} from './bench-platform';
import { DeliveryProgress, type ProgressSample } from './delivery-progress';

const BODY_BYTES = Number(process.env.BENCH_BODY_BYTES ?? 1024);
const DRAIN_TIMEOUT_SECONDS = Number(process.env.BENCH_DRAIN_TIMEOUT_SECONDS ?? 600);

/**
 * The webhook ingress at its maximum rate with real Redis and Kafka (token mode: route, streamed body under the
 * 256 KB cap, configuration version, credential, JSON parse, budgets, dedupe reservation, publish with acks=all, 202),
 * against a bare node:http 202 server in its own process, in the same run; and, from the same load, the delivery
 * consumer: what the orchestrator recorded per second while the ingress ran flat out, its lag (produced − recorded)
 * over time, and how long it took to drain afterwards. autocannon runs in its own process.
 */
async function main(): Promise<void> {
  const body = JSON.stringify({ action: 'opened', padding: 'x'.repeat(Math.max(0, BODY_BYTES - 40)) });
  progress('starting the platform (gateway, orchestrator, ingress; no runner)…');
  // The per-sender budget (60 a minute) would turn a load test into a 429 test; it is still taken on every request.
  const platform = await startBenchPlatform({ DELIVERY_RATE_PER_MINUTE: '100000000' });
  const bare = await startBaseline('bare-http-server');
  const watch = new DeliveryProgress(platform);
  try {
    await watch.connect();
    const factory = await apiPost(platform, '/factories', { name: 'bench' });
    const webhook = await apiPost(platform, `/factories/${factory.factory_id}/webhooks`, { name: 'bench' });
    const target = (url: string, prefix: string, durationSeconds = DURATION_SECONDS): AutocannonTarget => ({
      url,
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${webhook.secret}` },
      body,
      connections: CONNECTIONS,
      durationSeconds,
      expectStatus: 202,
      uniqueHeader: { name: 'x-service-delivery-id', prefix },
    });
    const bareUrl = `${bare.url}/webhooks/w/bare`;
    progress('warming up…');
    await runAutocannon(target(bareUrl, 'warm-bare', WARMUP_SECONDS));
    await runAutocannon(target(webhook.ingress_url!, 'warm', Math.min(2, WARMUP_SECONDS)));
    const warm = await watch.drain(120);
    progress(
      `warm-up deliveries recorded (${warm.drained ? 'drained' : 'NOT drained'} in ${warm.seconds} s)`,
    );
    progress(`measuring the bare node:http server (${DURATION_SECONDS} s, ${CONNECTIONS} connections)…`);
    const baseline = await runAutocannon(target(bareUrl, 'bare'));
    progress('measuring the ingress, the orchestrator consuming meanwhile…');
    const before = await watch.sample();
    watch.startSampling();
    const ingress = await runAutocannon(target(webhook.ingress_url!, 'bench'));
    watch.stopSampling();
    const atEnd = await watch.sample();
    progress(`load done: lag ${atEnd.lag}; draining…`);
    const drain = await watch.drain(DRAIN_TIMEOUT_SECONDS);
    const during = watch.samples.filter((s) => s.t >= before.t && s.t <= atEnd.t);
    const recordedDuringLoad = atEnd.recorded - before.recorded;
    const loadSeconds = atEnd.t - before.t;
    const final = watch.samples.at(-1)!;
    reportServerErrors(platform, [ingress]);
    printJson({
      benchmark: 'webhook-ingress',
      connections: CONNECTIONS,
      duration_seconds: DURATION_SECONDS,
      body_bytes: Buffer.byteLength(body),
      baseline: { name: 'bare node:http server answering 202 (own process)', ...baseline },
      ingress: {
        name: 'POST /webhooks/w/{uid} (token mode, Redis budgets + dedupe, Kafka acks=all)',
        ...ingress,
      },
      ratios: ratios(ingress, baseline),
      consumer: {
        name: 'orchestrator delivery consumer during the ingress load (produced to Kafka vs recorded in PostgreSQL)',
        produced_during_load: atEnd.produced - before.produced,
        recorded_during_load: recordedDuringLoad,
        recorded_per_second_during_load: Number((recordedDuringLoad / loadSeconds).toFixed(1)),
        lag_at_start: before.lag,
        lag_at_end_of_load: atEnd.lag,
        max_lag: Math.max(...during.map((s) => s.lag)),
        drained: drain.drained,
        drain_seconds: drain.seconds,
        recorded_per_second_overall: Number(
          ((final.recorded - before.recorded) / (final.t - before.t)).toFixed(1),
        ),
        lag_every_5s: everyNth(during, 5).map((s) => [Number((s.t - before.t).toFixed(1)), s.lag]),
      },
    });
  } finally {
    bare.stop();
    await watch.close();
    await platform.stop();
  }
}

const everyNth = (samples: ProgressSample[], n: number) => samples.filter((_, i) => i % n === 0);

void main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
