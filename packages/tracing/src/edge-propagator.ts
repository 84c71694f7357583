import type { Context, TextMapGetter, TextMapPropagator, TextMapSetter } from '@opentelemetry/api';

/**
 * The propagator of a service whose callers are not trusted (the public API, the webhook edge, the runner whose
 * HTTP callers are sandboxed agents): it writes the trace context into what the service sends, and never takes one
 * from what it receives, so a caller can neither join its requests to someone else's trace nor decide that the
 * platform records a trace (the sampled flag). Each request such a service receives starts a trace of its own.
 */
export class InjectOnlyPropagator implements TextMapPropagator {
  constructor(private readonly inner: TextMapPropagator) {}

  inject(context: Context, carrier: unknown, setter: TextMapSetter): void {
    this.inner.inject(context, carrier, setter);
  }

  extract(context: Context, _carrier: unknown, _getter: TextMapGetter): Context {
    return context;
  }

  fields(): string[] {
    return this.inner.fields();
  }
}
