import { formatPath } from './format-path';
import { isJsonObject, jsonEqual, type JsonValue } from './json-equal';
import type { FieldCondition, PayloadFilter } from './payload-filter';

export interface MatchResult {
  matched: boolean;
  /** One line per failed condition, e.g. `payload.action: "closed" is not an allowed value`; empty on a match. */
  mismatches: string[];
}

type Segments = readonly string[];
/** Where mismatches are reported; undefined while trying array elements, where only the overall outcome counts. */
type Sink = string[] | undefined;

/**
 * Evaluates a validated filter against a delivery body. Never throws on a JSON payload: recursion follows the
 * filter, whose depth is bounded at validation, and looks through one array level at a time.
 */
export function matchPayload(filter: PayloadFilter, payload: unknown): MatchResult {
  const mismatches: string[] = [];
  const matched = filter.fields.length === 0 || matchFilter(filter, payload, [], mismatches);
  return { matched, mismatches };
}

/** An array passes if one of its elements satisfies the whole filter; elements that are arrays have no fields. */
function matchFilter(filter: PayloadFilter, value: unknown, segments: Segments, sink: Sink): boolean {
  if (!Array.isArray(value)) return matchFields(filter, value, segments, sink);
  if (value.some((element) => matchFields(filter, element, segments, undefined))) return true;
  report(
    sink,
    segments,
    value.length === 0 ? 'empty array, no element to match' : 'no array element matches',
  );
  return false;
}

/** Every field must match; a non-object has no fields, so they are all absent. */
function matchFields(filter: PayloadFilter, value: unknown, segments: Segments, sink: Sink): boolean {
  let matched = true;
  for (const { key, condition } of filter.fields) {
    const present = isJsonObject(value) && Object.hasOwn(value, key);
    const field = present ? (value as Record<string, unknown>)[key] : undefined;
    if (matchCondition(condition, present, field, [...segments, key], sink)) continue;
    // Without a sink nobody reads the remaining mismatches, so stop at the first.
    if (sink === undefined) return false;
    matched = false;
  }
  return matched;
}

function matchCondition(
  condition: FieldCondition,
  present: boolean,
  value: unknown,
  segments: Segments,
  sink: Sink,
): boolean {
  // A missing parent leaves every nested field absent.
  if (condition.kind === 'nested') return matchFilter(condition.filter, value, segments, sink);
  const { exists, in: allowed, notIn: excluded } = condition;
  if (!present) {
    // Validation forbids combining `exists: false` with in/not_in, so absence alone decides here.
    if (exists === false) return true;
    report(sink, segments, 'missing');
    return false;
  }
  if (exists === false) {
    report(sink, segments, 'present, expected absent');
    return false;
  }
  let matched = true;
  if (allowed !== undefined && firstHit(value, allowed) === undefined) {
    report(sink, segments, notAllowed(value));
    matched = false;
  }
  const hit = excluded === undefined ? undefined : firstHit(value, excluded);
  if (hit !== undefined) {
    report(
      sink,
      segments,
      `${Array.isArray(value) ? 'element ' : ''}${describe(hit.value)} is excluded by not_in`,
    );
    matched = false;
  }
  return matched;
}

/** The value, or for an array its first element, that equals a member of `set`; boxed so a `null` hit counts. */
function firstHit(value: unknown, set: readonly JsonValue[]): { value: unknown } | undefined {
  const candidates: readonly unknown[] = Array.isArray(value) ? value : [value];
  const index = candidates.findIndex((candidate) => set.some((member) => jsonEqual(candidate, member)));
  return index < 0 ? undefined : { value: candidates[index] };
}

function notAllowed(value: unknown): string {
  if (!Array.isArray(value)) return `${describe(value)} is not an allowed value`;
  return value.length === 0
    ? 'empty array, no element is an allowed value'
    : 'no array element is an allowed value';
}

const MAX_SHOWN = 40;

/** A short description of a payload value, safe for logs: never the whole of a large value. */
function describe(value: unknown): string {
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (isJsonObject(value)) return 'an object';
  if (typeof value !== 'string') return String(value);
  const quoted = JSON.stringify(value);
  return quoted.length <= MAX_SHOWN ? quoted : `${quoted.slice(0, MAX_SHOWN - 2)}…"`;
}

function report(sink: Sink, segments: Segments, message: string): void {
  sink?.push(`${formatPath('payload', segments)}: ${message}`);
}
