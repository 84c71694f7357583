import {
  createKafkaConsumerLagGauge,
  createRunJobDurationHistogram,
  createRunQueueDepthGauge,
  createWarmRunPodsGauge,
  createWebhookDeliveriesCounter,
} from './domain-metrics';
import { createMetricsRegistry } from './metrics-registry';

describe('domain metrics', () => {
  it('exposes every webhook delivery label from the start and counts them', async () => {
    const registry = createMetricsRegistry('ingress', { defaultMetrics: false });
    const labels = ['Accepted', 'Rejected (invalid JSON)'];
    const counter = createWebhookDeliveriesCounter(registry, labels);
    counter.inc({ label: 'Rejected (invalid JSON)' });
    const text = await registry.metrics();
    for (const label of labels) {
      const value = label === 'Rejected (invalid JSON)' ? 1 : 0;
      expect(text).toContain(
        `conveyor_webhook_deliveries_total{label="${label}",service="ingress"} ${value}`,
      );
    }
  });

  it('returns the already registered metric instead of failing on a second registration', () => {
    const registry = createMetricsRegistry('orchestrator', { defaultMetrics: false });
    expect(createKafkaConsumerLagGauge(registry)).toBe(createKafkaConsumerLagGauge(registry));
    expect(createRunJobDurationHistogram(registry)).toBe(createRunJobDurationHistogram(registry));
    expect(createWebhookDeliveriesCounter(registry, ['Accepted'])).toBe(
      createWebhookDeliveriesCounter(registry, ['Accepted']),
    );
  });

  it('reads each warm Pod pool at scrape time, per image', async () => {
    const registry = createMetricsRegistry('runner', { defaultMetrics: false });
    let hits = 0;
    createWarmRunPodsGauge(registry, () => [{ image: 'node:20', ready: 2, starting: 1, hits, misses: 4 }]);
    hits = 7;
    const text = await registry.metrics();
    for (const [stat, value] of [
      ['ready', 2],
      ['starting', 1],
      ['hits', 7],
      ['misses', 4],
    ])
      expect(text).toContain(
        `conveyor_warm_run_pods{image="node:20",stat="${stat}",service="runner"} ${value}`,
      );
  });

  it('reads the queue depth at scrape time when given a collector', async () => {
    const registry = createMetricsRegistry('orchestrator', { defaultMetrics: false });
    createRunQueueDepthGauge(registry, async () => ({ waiting: 3, active: 1 }));
    const text = await registry.metrics();
    expect(text).toContain('conveyor_run_queue_depth{state="waiting",service="orchestrator"} 3');
    expect(text).toContain('conveyor_run_queue_depth{state="active",service="orchestrator"} 1');
    expect(text).toContain('conveyor_run_queue_depth{state="delayed",service="orchestrator"} 0');
  });

  it('adds the default process metrics unless told not to', async () => {
    expect(await createMetricsRegistry('gateway').metrics()).toContain(
      'process_cpu_user_seconds_total{service="gateway"}',
    );
  });
});
