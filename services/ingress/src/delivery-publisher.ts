import type { Kafka, Producer, RetryOptions } from 'kafkajs';
import { createIdempotentProducer, encodeDeliveryMessage, type DeliveryMessage } from '@conveyor/kafka';
import type { Logger } from '@conveyor/logger';

/** The producer's own retries: few and short, so kafkajs gives up before the ingress's publish deadline. */
export const PUBLISH_RETRY: RetryOptions = { retries: 2, initialRetryTime: 100, maxRetryTime: 1000 };

/** Why a publish did not complete; either way the delivery was not acknowledged and the sender gets 503. */
export class PublishError extends Error {
  override readonly name = 'PublishError';
  constructor(
    message: string,
    /** `failed`: Kafka refused or could not be reached. `timeout`: no answer within the deadline (outcome unknown). */
    readonly kind: 'failed' | 'timeout',
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

interface Pending {
  message: DeliveryMessage;
  resolve: () => void;
  reject: (err: PublishError) => void;
  /** Set once handed to kafkajs: from then on it can no longer be withdrawn. */
  sent: boolean;
  queuedAt: number;
  settled: boolean;
}

const MAX_BATCH = 500;

/**
 * Publishes deliveries keyed by webhook UID with acks from all in-sync replicas (idempotent producer); `publish`
 * resolves only once Kafka acknowledged the message, which is the ingress's precondition for answering 202.
 *
 * Concurrent publishes are batched: while one produce request is in flight, new messages queue and go out together
 * in the next request (the idempotent producer allows one in-flight request per broker anyway), and a message that
 * finds the producer idle waits up to `lingerMs` for company, like the Java client's linger.ms. A message still
 * queued when its deadline passes is withdrawn and never sent, so a sender that was answered 503 cannot find its
 * delivery accepted later; the producer's own retries end before the deadline for the message in flight.
 */
export class DeliveryPublisher {
  private readonly producer: Producer;
  private readonly queue: Pending[] = [];
  private flushing = false;
  private connected = false;
  private connecting: Promise<void> | undefined;
  private closed = false;

  constructor(
    kafka: Kafka,
    private readonly topic: string,
    private readonly logger: Logger,
    private readonly ackTimeoutMs = 5000,
    private readonly lingerMs = 0,
  ) {
    this.producer = createIdempotentProducer(kafka, PUBLISH_RETRY);
  }

  get isConnected(): boolean {
    return this.connected;
  }

  /** Connects once (concurrent callers share the attempt); a failure leaves the next publish to try again. */
  connect(): Promise<void> {
    if (this.connected) return Promise.resolve();
    this.connecting ??= this.producer
      .connect()
      .then(() => {
        this.connected = true;
      })
      .finally(() => {
        this.connecting = undefined;
      });
    return this.connecting;
  }

  /** Resolves when Kafka acknowledged the message; rejects with PublishError after at most `deadlineMs`. */
  publish(message: DeliveryMessage, deadlineMs: number): Promise<void> {
    if (this.closed) return Promise.reject(new PublishError('publisher is closed', 'failed'));
    return new Promise<void>((resolve, reject) => {
      const pending: Pending = {
        message,
        resolve,
        reject,
        sent: false,
        settled: false,
        queuedAt: performance.now(),
      };
      const timer = setTimeout(() => {
        if (pending.settled) return;
        pending.settled = true;
        if (!pending.sent) {
          const index = this.queue.indexOf(pending);
          if (index >= 0) this.queue.splice(index, 1);
          reject(new PublishError('Kafka did not take the delivery in time', 'failed'));
        } else {
          this.logger.error(
            { deliveryId: message.deliveryId, webhookUid: message.webhookUid },
            'Kafka acknowledgement timed out; outcome unknown',
          );
          reject(new PublishError('Kafka did not acknowledge the delivery in time', 'timeout'));
        }
      }, deadlineMs);
      const settle = (fn: () => void) => {
        clearTimeout(timer);
        if (pending.settled) return;
        pending.settled = true;
        fn();
      };
      pending.resolve = () => settle(resolve);
      pending.reject = (err) => settle(() => reject(err));
      this.queue.push(pending);
      void this.flush();
    });
  }

  private async flush(): Promise<void> {
    if (this.flushing) return;
    this.flushing = true;
    try {
      while (this.queue.length > 0) {
        try {
          await this.connect();
        } catch (err) {
          this.failQueued(err);
          continue;
        }
        const waited = performance.now() - this.queue[0]!.queuedAt;
        if (waited < this.lingerMs && this.queue.length < MAX_BATCH) {
          await new Promise((resolve) => setTimeout(resolve, this.lingerMs - waited));
          continue;
        }
        const batch = this.queue.splice(0, MAX_BATCH).filter((p) => !p.settled);
        if (batch.length === 0) continue;
        for (const p of batch) p.sent = true;
        try {
          await this.producer.send({
            topic: this.topic,
            acks: -1,
            timeout: this.ackTimeoutMs,
            messages: batch.map((p) => ({
              key: p.message.webhookUid,
              value: encodeDeliveryMessage(p.message),
              headers: { 'delivery-id': p.message.deliveryId },
            })),
          });
          for (const p of batch) p.resolve();
        } catch (err) {
          const error = new PublishError(
            `Kafka refused the delivery: ${err instanceof Error ? err.message : String(err)}`,
            'failed',
            { cause: err },
          );
          for (const p of batch) p.reject(error);
          // Start over with fresh connections: kafkajs keeps a connection that silently stopped answering.
          await this.reset();
        }
      }
    } finally {
      this.flushing = false;
    }
  }

  private async reset(): Promise<void> {
    this.connected = false;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.producer.disconnect().catch(() => undefined),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, 1000);
      }),
    ]);
    clearTimeout(timer);
  }

  private failQueued(err: unknown): void {
    const error = new PublishError(
      `Kafka is unreachable: ${err instanceof Error ? err.message : String(err)}`,
      'failed',
      { cause: err },
    );
    for (const p of this.queue.splice(0)) p.reject(error);
  }

  async disconnect(): Promise<void> {
    this.closed = true;
    await this.producer.disconnect();
    this.connected = false;
  }
}
