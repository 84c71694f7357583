import type { Consumer, Kafka, KafkaMessage } from 'kafkajs';
import { createConsumer, decodeDeliveryMessage, type DeliveryMessage } from '@conveyor/kafka';
import type { Logger } from '@conveyor/logger';
import { traceCarrierSchema } from '@conveyor/run-events';
import type { TraceCarrier } from '@conveyor/tracing';

export interface DeliveryPosition {
  topic: string;
  partition: number;
  offset: string;
}

export interface ConsumedDelivery {
  message: DeliveryMessage;
  position: DeliveryPosition;
  /** The ingress's trace of the delivery (the kafkajs instrumentation writes it into the message headers). */
  trace?: TraceCarrier;
}

/** Makes a batch of consumed deliveries durable (and starts their runs); resolves only once all of it committed. */
export type DeliveryBatchHandler = (deliveries: ConsumedDelivery[]) => Promise<void>;

/** Deliveries handed to the handler at once: bounds one batch's transaction and the work redone after a crash. */
export const DELIVERY_CHUNK = 200;

/** Partitions of the deliveries topic handled at the same time (at most one batch transaction each). */
const PARTITIONS_CONSUMED_CONCURRENTLY = 4;

/**
 * The orchestrator's consumer group on the deliveries topic, consuming a partition's fetched batch in chunks
 * (kafkajs `eachBatch`). A chunk's offsets are resolved only after the handler finished with all of it, and
 * committed after that, so a crash re-delivers (at-least-once); the handler itself is idempotent on delivery ID.
 */
export class DeliveryConsumer {
  private consumer: Consumer | undefined;

  constructor(
    private readonly kafka: Kafka,
    private readonly options: {
      topic: string;
      groupId: string;
      handler: DeliveryBatchHandler;
      logger: Logger;
    },
  ) {}

  async start(): Promise<void> {
    const { topic, groupId, handler, logger } = this.options;
    const consumer = createConsumer(this.kafka, groupId);
    this.consumer = consumer;
    // kafkajs restarts the consumer itself after retriable failures (a broker restart); say so when it gives up.
    consumer.on(consumer.events.CRASH, (event) => {
      const { error, restart } = event.payload;
      logger.error(
        { err: error.message, restart },
        restart ? 'delivery consumer crashed; restarting' : 'delivery consumer crashed and stopped',
      );
    });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      // Partitions are independent logs of distinct deliveries (each batch locks only its own rows), so they are
      // handled side by side instead of one after the other.
      partitionsConsumedConcurrently: PARTITIONS_CONSUMED_CONCURRENTLY,
      // Commits what was resolved after each batch; nothing is resolved before the handler made it durable.
      autoCommit: true,
      eachBatchAutoResolve: false,
      eachBatch: async ({ batch, resolveOffset, heartbeat, isRunning, isStale }) => {
        for (let start = 0; start < batch.messages.length; start += DELIVERY_CHUNK) {
          if (!isRunning() || isStale()) return;
          const chunk = batch.messages.slice(start, start + DELIVERY_CHUNK);
          const deliveries = this.decode(batch.topic, batch.partition, chunk);
          // A throw here makes kafkajs fetch the unresolved messages again (and not commit past them), as intended.
          if (deliveries.length > 0) await handler(deliveries);
          resolveOffset(chunk[chunk.length - 1]!.offset);
          await heartbeat();
          logger.debug(
            {
              topic: batch.topic,
              partition: batch.partition,
              deliveries: deliveries.length,
              lastOffset: chunk[chunk.length - 1]!.offset,
            },
            'deliveries consumed',
          );
        }
      },
    });
  }

  private decode(topic: string, partition: number, messages: KafkaMessage[]): ConsumedDelivery[] {
    const deliveries: ConsumedDelivery[] = [];
    for (const message of messages) {
      const position = { topic, partition, offset: message.offset };
      const decoded = decodeDeliveryMessage(message.value);
      if (decoded) deliveries.push({ message: decoded, position, trace: traceOf(message) });
      else this.options.logger.warn({ ...position }, 'skipping undecodable delivery message');
    }
    return deliveries;
  }

  async stop(): Promise<void> {
    const consumer = this.consumer;
    this.consumer = undefined;
    // disconnect() waits for the in-flight batch to finish before leaving the group.
    if (consumer) await consumer.disconnect();
  }
}

function traceOf(message: KafkaMessage): TraceCarrier | undefined {
  const header = (name: string) => message.headers?.[name]?.toString();
  const carrier = traceCarrierSchema.safeParse({
    traceparent: header('traceparent'),
    tracestate: header('tracestate'),
  });
  return carrier.success ? carrier.data : undefined;
}
