import type { IncomingMessage } from 'node:http';
import { tracingEnabled } from './tracing-enabled';

export interface TracingOptions {
  /** `service.name` of every span, unless OTEL_SERVICE_NAME says otherwise. */
  service: string;
  /**
   * The service's callers are not trusted (the public API, the webhook edge): a trace context they send is ignored
   * (InjectOnlyPropagator), so every request starts a trace of its own.
   */
  untrustedCallers?: boolean;
  /**
   * Record a server span for each incoming HTTP request (default). The runner's HTTP callers are its probes and its
   * sandboxed agents (the model proxy), whose requests are traced as the run's own spans instead.
   */
  incomingHttp?: boolean;
}

export interface Tracing {
  readonly enabled: boolean;
  /** Exports the spans still buffered; resolves when done. */
  shutdown(): Promise<void>;
}

const PROBES = new Set(['/healthz', '/readyz', '/readyz/local', '/metrics']);
const isProbe = (req: IncomingMessage): boolean => PROBES.has((req.url ?? '').split('?', 1)[0]!);

/**
 * Starts OpenTelemetry for this process, once, before the modules it instruments are loaded: a service's main.ts
 * imports its `tracing.ts` first. Everything else (exporter, endpoint, protocol, sampler, batch sizes) comes from the
 * standard OTEL_* variables (docs/observability.md); tracing is off unless they ask for it (tracingEnabled).
 */
export function startTracing(options: TracingOptions, env: NodeJS.ProcessEnv = process.env): Tracing {
  if (!tracingEnabled(env)) return { enabled: false, shutdown: async () => undefined };
  // Loaded only when on: a service with tracing off never pays for the SDK's modules.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const sdk = require('./tracing-sdk') as typeof import('./tracing-sdk');
  const incomingHttp = options.incomingHttp ?? true;
  const started = sdk.startSdk({
    serviceName: env.OTEL_SERVICE_NAME?.trim() || options.service,
    injectOnly: options.untrustedCallers ?? false,
    ignoreIncoming: (req) => !incomingHttp || isProbe(req),
  });
  return { enabled: true, shutdown: () => started.shutdown() };
}
