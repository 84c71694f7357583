import type { Admin } from 'kafkajs';
import type { Gauge } from '@conveyor/metrics';
import type { Logger } from '@conveyor/logger';
import { BackgroundLoop } from '@conveyor/runtime';

export interface PartitionLag {
  partition: number;
  lag: number;
}

/**
 * Lag per partition: log-end offset minus the group's committed offset. A partition the group never committed
 * counts everything still retained (the consumer starts from the beginning); a committed offset below the log
 * start (retention deleted it) counts from the log start, where the consumer will resume.
 */
export function computeConsumerLag(
  topicOffsets: Array<{ partition: number; high: string; low: string }>,
  committed: Array<{ partition: number; offset: string }>,
): PartitionLag[] {
  const committedBy = new Map(committed.map((p) => [p.partition, BigInt(p.offset)]));
  return topicOffsets
    .map(({ partition, high, low }) => {
      const end = BigInt(high);
      const start = BigInt(low);
      const offset = committedBy.get(partition) ?? -1n;
      const position = offset < 0n ? start : offset > start ? offset : start;
      const lag = end > position ? end - position : 0n;
      return { partition, lag: Number(lag) };
    })
    .sort((a, b) => a.partition - b.partition);
}

export interface ConsumerLagMonitorOptions {
  topic: string;
  groupId: string;
  gauge: Gauge<'topic' | 'partition'>;
  logger: Logger;
  /** How often to sample; 15 s by default (a typical scrape interval). */
  intervalMs?: number;
}

/** Periodically sets `conveyor_kafka_consumer_lag{topic,partition}` for one consumer group on one topic. */
export class ConsumerLagMonitor {
  private readonly loop: BackgroundLoop;

  constructor(
    private readonly admin: Pick<Admin, 'fetchTopicOffsets' | 'fetchOffsets'>,
    private readonly options: ConsumerLagMonitorOptions,
  ) {
    this.loop = new BackgroundLoop({
      name: 'consumer lag sample',
      dependency: 'kafka',
      intervalMs: options.intervalMs ?? 15_000,
      run: () => this.measure(),
      logger: options.logger,
    });
  }

  start(): void {
    this.loop.start();
  }

  /** One sample; overlapping calls share the one in flight. Failures are logged, never thrown. */
  sample(): Promise<void> {
    return this.loop.trigger();
  }

  async stop(): Promise<void> {
    await this.loop.stop();
  }

  private async measure(): Promise<void> {
    const { topic, groupId, gauge } = this.options;
    const [topicOffsets, groupOffsets] = await Promise.all([
      this.admin.fetchTopicOffsets(topic),
      this.admin.fetchOffsets({ groupId, topics: [topic] }),
    ]);
    const committed = groupOffsets.find((t) => t.topic === topic)?.partitions ?? [];
    for (const { partition, lag } of computeConsumerLag(topicOffsets, committed)) {
      gauge.set({ topic, partition: String(partition) }, lag);
    }
  }
}
