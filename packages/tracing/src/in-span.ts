import {
  SpanStatusCode,
  context as contextApi,
  trace,
  type Attributes,
  type Context,
  type Span,
} from '@opentelemetry/api';

const tracer = () => trace.getTracer('conveyor');

/**
 * Runs `fn` inside a new active span (a child of `parent`, the active context by default), ending it when `fn`
 * settles; a throw marks the span ERROR with the error's class only (messages may carry what a trace must not).
 */
export async function inSpan<T>(
  name: string,
  fn: (span: Span) => Promise<T>,
  options: { parent?: Context; attributes?: Attributes } = {},
): Promise<T> {
  const parent = options.parent ?? contextApi.active();
  return tracer().startActiveSpan(name, { attributes: options.attributes }, parent, async (span) => {
    try {
      return await fn(span);
    } catch (err) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.name : 'error' });
      throw err;
    } finally {
      span.end();
    }
  });
}

/** Starts a span that the caller ends (a phase whose end is found later); not made active. */
export function startSpan(name: string, parent: Context, attributes?: Attributes, startTime?: number): Span {
  return tracer().startSpan(name, { attributes, startTime }, parent);
}

export { trace, contextApi as context };
export type { Context, Span };
