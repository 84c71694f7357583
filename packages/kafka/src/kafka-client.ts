import { Kafka, logLevel, type Producer, type Consumer, type ITopicConfig, type LogEntry } from 'kafkajs';

export type KafkaLog = (level: 'error' | 'warn' | 'info' | 'debug', message: string, fields: Record<string, unknown>) => void;

/** kafkajs logs through our structured logger instead of its own console format. */
export function createKafka(options: { clientId: string; brokers: string[]; log?: KafkaLog; connectionTimeoutMs?: number }): Kafka {
  const log = options.log;
  return new Kafka({
    clientId: options.clientId,
    brokers: options.brokers,
    connectionTimeout: options.connectionTimeoutMs ?? 3000,
    logLevel: logLevel.WARN,
    logCreator: () => (entry: LogEntry) => {
      if (!log) return;
      const { message, ...fields } = entry.log;
      const level = entry.level === logLevel.ERROR ? 'error' : entry.level === logLevel.WARN ? 'warn' : entry.level === logLevel.INFO ? 'info' : 'debug';
      log(level, `kafka: ${message}`, { namespace: entry.namespace, ...fields });
    },
  });
}

/**
 * Idempotent producer: acks from all in-sync replicas and broker-side de-duplication of retried sends,
 * which is what lets the ingress answer 202 only once a delivery is durably in the log.
 */
export function createIdempotentProducer(kafka: Kafka): Producer {
  return kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false, retry: { retries: 5 } });
}

export function createConsumer(kafka: Kafka, groupId: string): Consumer {
  return kafka.consumer({ groupId, allowAutoTopicCreation: false, sessionTimeout: 30_000, heartbeatInterval: 3000 });
}

/** Creates topics that are missing; safe to call from every service start. */
export async function ensureTopics(kafka: Kafka, topics: ITopicConfig[]): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const missing = topics.filter((t) => !existing.has(t.topic));
    if (missing.length > 0) await admin.createTopics({ topics: missing, waitForLeaders: true });
  } finally {
    await admin.disconnect();
  }
}
