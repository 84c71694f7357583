import { matchPayload, type MatchResult } from './match-payload';
import { parsePayloadFilter } from './parse-payload-filter';

export type FilterEvaluation = MatchResult | { matched: false; mismatches: string[]; error: string };

/**
 * Parses and applies a stored filter in one step. No filter (undefined or null) matches every delivery; an invalid
 * one matches none (fail closed) and says why in `error`, for the delivery log.
 */
export function evaluateFilter(rawFilter: unknown, payload: unknown): FilterEvaluation {
  if (rawFilter === undefined || rawFilter === null) return { matched: true, mismatches: [] };
  const parsed = parsePayloadFilter(rawFilter);
  if (!parsed.ok) {
    const details = parsed.errors.map(({ path, message }) => `${path}: ${message}`).join('; ');
    return { matched: false, mismatches: [], error: `invalid payload filter: ${details}` };
  }
  return matchPayload(parsed.filter, payload);
}
