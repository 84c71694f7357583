import type { Consumer, Kafka } from 'kafkajs';
import { createConsumer, decodeDeliveryMessage, type DeliveryMessage } from '@conveyor/kafka';
import type { Logger } from '@conveyor/logger';

export type DeliveryHandler = (message: DeliveryMessage, position: { topic: string; partition: number; offset: string }) => Promise<void>;

/**
 * The orchestrator's consumer group on the deliveries topic. Offsets are committed only after the handler
 * finished, so a crash re-delivers (at-least-once); the handler itself is idempotent on delivery ID.
 */
export class DeliveryConsumer {
  private consumer: Consumer | undefined;

  constructor(
    private readonly kafka: Kafka,
    private readonly options: { topic: string; groupId: string; handler: DeliveryHandler; logger: Logger },
  ) {}

  async start(): Promise<void> {
    const { topic, groupId, handler, logger } = this.options;
    const consumer = createConsumer(this.kafka, groupId);
    this.consumer = consumer;
    // kafkajs restarts the consumer itself after retriable failures (a broker restart); say so when it gives up.
    consumer.on(consumer.events.CRASH, (event) => {
      const { error, restart } = event.payload;
      logger.error({ err: error.message, restart }, restart ? 'delivery consumer crashed; restarting' : 'delivery consumer crashed and stopped');
    });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      autoCommit: true,
      eachMessage: async ({ topic: messageTopic, partition, message }) => {
        const decoded = decodeDeliveryMessage(message.value);
        const position = { topic: messageTopic, partition, offset: message.offset };
        if (!decoded) {
          logger.warn({ ...position }, 'skipping undecodable delivery message');
          return;
        }
        // A throw here makes kafkajs retry the message (and not commit past it), which is what we want.
        await handler(decoded, position);
        logger.debug({ deliveryId: decoded.deliveryId, webhookUid: decoded.webhookUid, ...position }, 'delivery consumed');
      },
    });
  }

  async stop(): Promise<void> {
    const consumer = this.consumer;
    this.consumer = undefined;
    // disconnect() waits for the in-flight eachMessage to finish before leaving the group.
    if (consumer) await consumer.disconnect();
  }
}
