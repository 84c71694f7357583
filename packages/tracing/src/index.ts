export { startTracing, type Tracing, type TracingOptions } from './start-tracing';
export { tracingEnabled } from './tracing-enabled';
export { InjectOnlyPropagator } from './edge-propagator';
export { contextFromCarrier, currentTraceCarrier, type TraceCarrier } from './trace-carrier';
export { context, inSpan, startSpan, trace, type Context, type Span } from './in-span';
