import { traceCarrierSchema } from '@conveyor/run-events';
import { contextFromCarrier, inSpan } from '@conveyor/tracing';

/**
 * Runs `fn` as a span of a run's own trace: the one its row's `traceContext` names (the request, delivery or requeue
 * its latest execution was started in). A run without one (started while tracing was off) gets no span: a background
 * loop never starts traces of its own.
 */
export function inRunTrace<T>(
  name: string,
  run: { id: string; execution: number; traceContext: unknown },
  fn: () => Promise<T>,
): Promise<T> {
  const carried = traceCarrierSchema.safeParse(run.traceContext);
  if (!carried.success) return fn();
  return inSpan(name, fn, {
    parent: contextFromCarrier(carried.data),
    attributes: { 'conveyor.run_id': run.id, 'conveyor.execution': run.execution },
  });
}
