import type { Metric, Registry } from 'prom-client';

/**
 * The metric already registered under `name`, or a new one: factories are idempotent per registry, so two
 * components of one service can ask for the same metric without a "already registered" error.
 */
export function getOrCreate<T extends Metric>(registry: Registry, name: string, create: () => T): T {
  return (registry.getSingleMetric(name) as T | undefined) ?? create();
}
