import { collectDefaultMetrics, Registry } from 'prom-client';

export type { Counter, Gauge, Histogram, Registry } from 'prom-client';

/**
 * One registry per service (never prom-client's global one, so several instances can live in one test process):
 * every series carries `service`, and the default Node.js process metrics are included.
 */
export function createMetricsRegistry(service: string, options: { defaultMetrics?: boolean } = {}): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: registry });
  return registry;
}
