import { createPrismaClient, type DbClient } from '@conveyor/db';
import { createKafka } from '@conveyor/kafka';
import type { RunningPlatform } from '@conveyor/testing';
import type { Admin } from 'kafkajs';

export interface ProgressSample {
  /** Seconds since sampling started. */
  t: number;
  /** Messages in the deliveries topic (sum of the partitions' high watermarks). */
  produced: number;
  /** Entries the orchestrator's consumer wrote to the delivery log. */
  recorded: number;
  lag: number;
}

/**
 * Watches the delivery consumer from outside: what the ingress produced to Kafka against what the orchestrator
 * recorded in PostgreSQL, once a second.
 */
export class DeliveryProgress {
  private readonly db: DbClient;
  private readonly admin: Admin;
  private readonly started = Date.now();
  readonly samples: ProgressSample[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly platform: RunningPlatform) {
    this.db = createPrismaClient(platform.databaseUrl);
    this.admin = createKafka({
      clientId: 'bench-progress',
      brokers: platform.env.KAFKA_BROKERS!.split(','),
    }).admin();
  }

  async connect(): Promise<void> {
    await this.admin.connect();
  }

  async sample(): Promise<ProgressSample> {
    const [offsets, rows] = await Promise.all([
      this.admin.fetchTopicOffsets(this.platform.env.DELIVERIES_TOPIC!),
      this.db.$queryRaw<Array<{ n: bigint }>>`SELECT count(*) AS n FROM "WebhookDelivery"`,
    ]);
    const produced = offsets.reduce((sum, p) => sum + Number(p.high), 0);
    const recorded = Number(rows[0]!.n);
    const s = {
      t: Number(((Date.now() - this.started) / 1000).toFixed(1)),
      produced,
      recorded,
      lag: produced - recorded,
    };
    this.samples.push(s);
    return s;
  }

  /** Samples every second in the background until stopped. */
  startSampling(): void {
    this.timer = setInterval(() => void this.sample().catch(() => undefined), 1000);
  }

  stopSampling(): void {
    clearInterval(this.timer);
  }

  /** Waits until everything produced is recorded, or `timeoutSeconds` passed; returns the seconds it took. */
  async drain(timeoutSeconds: number): Promise<{ drained: boolean; seconds: number }> {
    const t0 = Date.now();
    for (;;) {
      const s = await this.sample();
      const seconds = Number(((Date.now() - t0) / 1000).toFixed(1));
      if (s.lag <= 0) return { drained: true, seconds };
      if (seconds > timeoutSeconds) return { drained: false, seconds };
      await new Promise((r) => setTimeout(r, 1000));
    }
  }

  async close(): Promise<void> {
    this.stopSampling();
    await Promise.allSettled([this.admin.disconnect(), this.db.$disconnect()]);
  }
}
