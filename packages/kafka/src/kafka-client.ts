import {
  Kafka,
  logLevel,
  type Producer,
  type Consumer,
  type ITopicConfig,
  type LogEntry,
  type RetryOptions,
  type ISocketFactory,
} from 'kafkajs';
import type { KafkaSecurityOptions } from './kafka-security';
// Every client of the platform's services is made here: the queue's idle timer loop is fixed before the first.
import './request-queue-idle-fix';

export type KafkaLog = (
  level: 'error' | 'warn' | 'info' | 'debug',
  message: string,
  fields: Record<string, unknown>,
) => void;

/** kafkajs logs through our structured logger instead of its own console format. */
export function createKafka(options: {
  clientId: string;
  brokers: string[];
  log?: KafkaLog;
  connectionTimeoutMs?: number;
  /** How long a request may wait for its response (kafkajs default 30 s). */
  requestTimeoutMs?: number;
  /** Client-level retries (connecting, metadata); kafkajs default 5 retries up to 30 s apart. */
  retry?: RetryOptions;
  /** Replaces kafkajs's TCP socket creation (tests simulate broker outages with it). */
  socketFactory?: ISocketFactory;
  /** TLS and SASL, from `kafkaSecurityOptions` (absent: plain text, no authentication). */
  security?: KafkaSecurityOptions;
}): Kafka {
  const log = options.log;
  return new Kafka({
    clientId: options.clientId,
    brokers: options.brokers,
    connectionTimeout: options.connectionTimeoutMs ?? 3000,
    ...(options.requestTimeoutMs !== undefined && { requestTimeout: options.requestTimeoutMs }),
    ...(options.retry && { retry: options.retry }),
    ...(options.socketFactory && { socketFactory: options.socketFactory }),
    ...(options.security?.ssl !== undefined && { ssl: options.security.ssl }),
    ...(options.security?.sasl && { sasl: options.security.sasl }),
    logLevel: logLevel.WARN,
    logCreator: () => (entry: LogEntry) => {
      if (!log) return;
      const { message, ...fields } = entry.log;
      const level =
        entry.level === logLevel.ERROR
          ? 'error'
          : entry.level === logLevel.WARN
            ? 'warn'
            : entry.level === logLevel.INFO
              ? 'info'
              : 'debug';
      log(level, `kafka: ${message}`, { namespace: entry.namespace, ...fields });
    },
  });
}

/**
 * Idempotent producer: acks from all in-sync replicas and broker-side de-duplication of retried sends,
 * which is what lets the ingress answer 202 only once a delivery is durably in the log.
 */
export function createIdempotentProducer(kafka: Kafka, retry: RetryOptions = { retries: 5 }): Producer {
  return kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false, retry });
}

export function createConsumer(kafka: Kafka, groupId: string): Consumer {
  return kafka.consumer({
    groupId,
    allowAutoTopicCreation: false,
    sessionTimeout: 30_000,
    heartbeatInterval: 3000,
  });
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
