import { ROOT_CONTEXT, defaultTextMapGetter, defaultTextMapSetter, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { InjectOnlyPropagator } from './edge-propagator';

const CALLER = '00-feedfacefeedfacefeedfacefeedface-1111111111111111-01';

describe('InjectOnlyPropagator (services whose callers are not trusted)', () => {
  const propagator = new InjectOnlyPropagator(new W3CTraceContextPropagator());

  it("takes no trace context from a caller's headers: the request starts a trace of its own", () => {
    const extracted = propagator.extract(ROOT_CONTEXT, { traceparent: CALLER }, defaultTextMapGetter);
    expect(trace.getSpanContext(extracted)).toBeUndefined();
  });

  it('still writes the active trace context into what the service sends', () => {
    const active = new W3CTraceContextPropagator().extract(
      ROOT_CONTEXT,
      { traceparent: CALLER },
      defaultTextMapGetter,
    );
    const headers: Record<string, string> = {};
    propagator.inject(active, headers, defaultTextMapSetter);
    expect(headers.traceparent).toBe(CALLER);
    expect(propagator.fields()).toContain('traceparent');
  });
});
