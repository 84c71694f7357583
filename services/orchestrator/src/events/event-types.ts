import { AppError } from '@conveyor/errors';

/** The events a run emits: each state it enters that a caller cares about, and each artifact it reports. */
export const RUN_EVENT_TYPES = [
  'run.queued',
  'run.inprogress',
  'run.succeeded',
  'run.failed',
  'run.error',
  'run.cancelled',
  'run.blocked',
  'run.artifact_reported',
] as const;
export type RunEventType = (typeof RUN_EVENT_TYPES)[number];

/** An endpoint subscribes to listed types, or to every type with `*`. */
export const EVENT_TYPE_FILTERS: readonly string[] = [...RUN_EVENT_TYPES, '*'];

/** Distinct, known, at least one; sorted so a stored filter reads the same whatever order it was given in. */
export function validateEventTypes(types: readonly string[]): string[] {
  if (types.length === 0) throw new AppError('invalid_request', 'event_types must name at least one type');
  const unknown = types.filter((t) => !EVENT_TYPE_FILTERS.includes(t));
  if (unknown.length > 0) {
    throw new AppError(
      'invalid_request',
      `event_types: unknown type(s) ${unknown.join(', ')}; known: ${EVENT_TYPE_FILTERS.join(', ')}`,
    );
  }
  return [...new Set(types)].sort();
}
