import { createKafkaConsumerLagGauge, createMetricsRegistry } from '@conveyor/metrics';
import type { Logger } from '@conveyor/logger';
import { computeConsumerLag, ConsumerLagMonitor } from './consumer-lag-monitor';

describe('computeConsumerLag', () => {
  it('subtracts the committed offset from the log end, per partition', () => {
    expect(
      computeConsumerLag(
        [
          { partition: 1, low: '0', high: '10' },
          { partition: 0, low: '0', high: '5' },
        ],
        [
          { partition: 0, offset: '5' },
          { partition: 1, offset: '7' },
        ],
      ),
    ).toEqual([
      { partition: 0, lag: 0 },
      { partition: 1, lag: 3 },
    ]);
  });

  it('counts all retained messages when the group never committed, and never goes below the log start', () => {
    expect(
      computeConsumerLag(
        [
          { partition: 0, low: '4', high: '9' },
          { partition: 1, low: '100', high: '120' },
        ],
        [
          { partition: 0, offset: '-1' },
          { partition: 1, offset: '50' },
        ],
      ),
    ).toEqual([
      { partition: 0, lag: 5 },
      { partition: 1, lag: 20 },
    ]);
  });
});

describe('ConsumerLagMonitor', () => {
  const logger = { warn: jest.fn(), error: jest.fn(), info: jest.fn() } as unknown as Logger;

  it('sets the gauge for every partition of the topic', async () => {
    const registry = createMetricsRegistry('orchestrator', { defaultMetrics: false });
    const admin = {
      fetchTopicOffsets: jest.fn(async () => [
        { partition: 0, offset: '8', high: '8', low: '0' },
        { partition: 1, offset: '3', high: '3', low: '0' },
      ]),
      fetchOffsets: jest.fn(async () => [
        { topic: 'deliveries', partitions: [{ partition: 0, offset: '6', metadata: null }] },
      ]),
    };
    const monitor = new ConsumerLagMonitor(admin, {
      topic: 'deliveries',
      groupId: 'g',
      gauge: createKafkaConsumerLagGauge(registry),
      logger,
    });
    await monitor.sample();
    expect(admin.fetchOffsets).toHaveBeenCalledWith({ groupId: 'g', topics: ['deliveries'] });
    const text = await registry.metrics();
    expect(text).toContain(
      'conveyor_kafka_consumer_lag{topic="deliveries",partition="0",service="orchestrator"} 2',
    );
    expect(text).toContain(
      'conveyor_kafka_consumer_lag{topic="deliveries",partition="1",service="orchestrator"} 3',
    );
    await monitor.stop();
  });

  it('logs a failed sample (Kafka unreachable) instead of throwing', async () => {
    const registry = createMetricsRegistry('orchestrator', { defaultMetrics: false });
    const admin = {
      fetchTopicOffsets: jest.fn(async () => {
        throw Object.assign(new Error('Connection error: connect ECONNREFUSED'), {
          name: 'KafkaJSConnectionError',
        });
      }),
      fetchOffsets: jest.fn(async () => []),
    };
    const monitor = new ConsumerLagMonitor(admin, {
      topic: 't',
      groupId: 'g',
      gauge: createKafkaConsumerLagGauge(registry),
      logger,
    });
    await expect(monitor.sample()).resolves.toBeUndefined();
    expect(logger.warn).toHaveBeenCalled();
  });
});
