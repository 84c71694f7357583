import { ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { contextFromCarrier, currentTraceCarrier } from './trace-carrier';

const PARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

describe('trace carriers (outbox rows, job data)', () => {
  it('carries a trace context from one process to the next unchanged', () => {
    const continued = contextFromCarrier({ traceparent: PARENT, tracestate: 'vendor=1' });
    expect(trace.getSpanContext(continued)).toMatchObject({
      traceId: '0af7651916cd43dd8448eb211c80319c',
      spanId: 'b7ad6b7169203331',
      isRemote: true,
    });
    expect(currentTraceCarrier(continued)).toEqual({ traceparent: PARENT, tracestate: 'vendor=1' });
  });

  it('is empty where there is no trace (tracing off): nothing is written into the message', () => {
    expect(currentTraceCarrier(ROOT_CONTEXT)).toBeUndefined();
    expect(contextFromCarrier(undefined)).toBe(ROOT_CONTEXT);
    expect(trace.getSpanContext(contextFromCarrier({ traceparent: 'not-a-traceparent' }))).toBeUndefined();
  });
});
