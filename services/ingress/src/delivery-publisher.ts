import type { Kafka, Producer } from 'kafkajs';
import { createIdempotentProducer, encodeDeliveryMessage, type DeliveryMessage } from '@conveyor/kafka';

/**
 * Publishes deliveries keyed by webhook UID. `publish` resolves only once every in-sync replica has the
 * message (acks: -1), which is the ingress's precondition for answering 202.
 */
export class DeliveryPublisher {
  private readonly producer: Producer;
  private connected = false;

  constructor(
    kafka: Kafka,
    private readonly topic: string,
  ) {
    this.producer = createIdempotentProducer(kafka);
    this.producer.on(this.producer.events.DISCONNECT, () => {
      this.connected = false;
    });
    this.producer.on(this.producer.events.CONNECT, () => {
      this.connected = true;
    });
  }

  get isConnected(): boolean {
    return this.connected;
  }

  async connect(): Promise<void> {
    await this.producer.connect();
  }

  async publish(message: DeliveryMessage, timeoutMs = 5000): Promise<{ partition: number; offset: string }> {
    const [record] = await this.producer.send({
      topic: this.topic,
      acks: -1,
      timeout: timeoutMs,
      messages: [{ key: message.webhookUid, value: encodeDeliveryMessage(message), headers: { 'delivery-id': message.deliveryId } }],
    });
    return { partition: record?.partition ?? -1, offset: record?.baseOffset ?? '' };
  }

  async disconnect(): Promise<void> {
    await this.producer.disconnect();
  }
}
