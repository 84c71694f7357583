import {
  ROOT_CONTEXT,
  context,
  defaultTextMapGetter,
  defaultTextMapSetter,
  type Context,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';

/**
 * A trace context written into a message that crosses a process boundary no instrumentation covers (an outbox row, a
 * BullMQ job's data); its wire schema is @conveyor/run-events' traceCarrierSchema.
 */
// A type, not an interface: it is stored as JSON (Prisma's InputJsonValue needs the implicit index signature).
export type TraceCarrier = {
  traceparent: string;
  tracestate?: string;
};

// Carriers are written and read by the platform's own processes, so they are read with the W3C propagator itself,
// never the process's (which, in a service with untrusted callers, takes nothing from what it receives).
const w3c = new W3CTraceContextPropagator();

/** The active trace context as a carrier; undefined when there is none (tracing off, or no span active). */
export function currentTraceCarrier(active: Context = context.active()): TraceCarrier | undefined {
  const carrier: Partial<TraceCarrier> = {};
  w3c.inject(active, carrier, defaultTextMapSetter);
  if (!carrier.traceparent) return undefined;
  return carrier.tracestate
    ? { traceparent: carrier.traceparent, tracestate: carrier.tracestate }
    : { traceparent: carrier.traceparent };
}

/** The context a carrier continues; the root context (a new trace) when there is none. */
export function contextFromCarrier(carrier: TraceCarrier | undefined): Context {
  return carrier ? w3c.extract(ROOT_CONTEXT, carrier, defaultTextMapGetter) : ROOT_CONTEXT;
}
