import { AppError } from '@conveyor/errors';
import { EVENT_TYPE_FILTERS } from '@conveyor/run-events';

const KNOWN: readonly string[] = EVENT_TYPE_FILTERS;

/** Distinct, known, at least one; sorted so a stored filter reads the same whatever order it was given in. */
export function validateEventTypes(types: readonly string[]): string[] {
  if (types.length === 0) throw new AppError('invalid_request', 'event_types must name at least one type');
  const unknown = types.filter((t) => !KNOWN.includes(t));
  if (unknown.length > 0) {
    throw new AppError(
      'invalid_request',
      `event_types: unknown type(s) ${unknown.join(', ')}; known: ${EVENT_TYPE_FILTERS.join(', ')}`,
    );
  }
  return [...new Set(types)].sort();
}
