import { z } from 'zod';

/**
 * A W3C trace context as it travels in the platform's own messages (an outbox row, a BullMQ job's data, read from
 * Kafka headers): `traceparent` and `tracestate`, nothing else, bounded so a carrier can never bloat a job.
 * @conveyor/tracing writes and reads it.
 */
export const traceCarrierSchema = z
  .object({ traceparent: z.string().max(128), tracestate: z.string().max(512).optional() })
  .strip();
