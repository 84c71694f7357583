import { formatPath } from './format-path';
import type { JsonValue } from './json-equal';
import {
  FILTER_OPERATORS,
  isFilterOperator,
  type FieldCondition,
  type FieldFilter,
  type PayloadFilter,
} from './payload-filter';

export interface FilterError {
  /** Where the problem is, e.g. `filter.payload.action.in`. */
  path: string;
  message: string;
}

export type ParsePayloadFilterResult =
  { ok: true; filter: PayloadFilter } | { ok: false; errors: FilterError[] };

export interface ParsePayloadFilterOptions {
  /** Prefix of every error path: where the filter sits in the request or definition file. */
  path?: string;
}

// Bounds recursion in validation and evaluation; real payload filters are a few levels deep.
const MAX_DEPTH = 32;

const OPERATOR_LIST = FILTER_OPERATORS.map((op) => `"${op}"`).join(', ');

/**
 * Validates a payload filter when it is saved and compiles it for `matchPayload`. Collects every problem, each
 * naming its path, so the API can answer one 400 listing them all.
 */
export function parsePayloadFilter(
  input: unknown,
  options: ParsePayloadFilterOptions = {},
): ParsePayloadFilterResult {
  const parser = new Parser(options.path ?? 'filter.payload');
  if (!isPlainObject(input)) {
    parser.error([], 'must be an object whose keys name payload fields');
    return { ok: false, errors: parser.errors };
  }
  // The root is always a field map (an empty one matches everything): a payload field may be named "in".
  const filter = parser.fields(input, []);
  return parser.errors.length === 0 ? { ok: true, filter } : { ok: false, errors: parser.errors };
}

type Segments = readonly (string | number)[];

class Parser {
  readonly errors: FilterError[] = [];

  constructor(private readonly root: string) {}

  error(segments: Segments, message: string): void {
    this.errors.push({ path: formatPath(this.root, segments), message });
  }

  fields(object: Record<string, unknown>, segments: Segments): PayloadFilter {
    const fields: FieldFilter[] = [];
    for (const [key, value] of Object.entries(object)) {
      const condition = this.condition(value, [...segments, key]);
      if (condition !== undefined) fields.push({ key, condition });
    }
    return { fields };
  }

  private condition(value: unknown, segments: Segments): FieldCondition | undefined {
    if (segments.length > MAX_DEPTH) {
      this.error(segments, `nested more than ${MAX_DEPTH} levels deep`);
      return undefined;
    }
    if (Array.isArray(value)) {
      const allowed = this.valueList(value, segments);
      return allowed && { kind: 'operators', in: allowed };
    }
    if (!isPlainObject(value)) {
      this.error(
        segments,
        `must be an array of allowed values or an object (operators ${OPERATOR_LIST}, or nested fields)`,
      );
      return undefined;
    }
    const keys = Object.keys(value);
    if (keys.length === 0) {
      // Ambiguous (nested filter that checks nothing, or a forgotten operator): say what was probably meant.
      this.error(segments, 'must not be an empty object; use {"exists": true} to require the field');
      return undefined;
    }
    const operators = keys.filter(isFilterOperator);
    if (operators.length === keys.length) return this.operators(value, segments);
    if (operators.length > 0) {
      const fields = keys.filter((key) => !isFilterOperator(key));
      this.error(
        segments,
        `mixes operators (${operators.join(', ')}) with other keys (${fields.join(', ')}); ` +
          `an object holds either operators ${OPERATOR_LIST} or nested fields`,
      );
      return undefined;
    }
    return { kind: 'nested', filter: this.fields(value, segments) };
  }

  private operators(object: Record<string, unknown>, segments: Segments): FieldCondition | undefined {
    const allowed = Object.hasOwn(object, 'in')
      ? this.valueList(object['in'], [...segments, 'in'])
      : undefined;
    const excluded = Object.hasOwn(object, 'not_in')
      ? this.valueList(object['not_in'], [...segments, 'not_in'])
      : undefined;
    const exists = object['exists'];
    if (Object.hasOwn(object, 'exists') && typeof exists !== 'boolean') {
      this.error([...segments, 'exists'], 'must be true or false');
    }
    if (exists === false && (Object.hasOwn(object, 'in') || Object.hasOwn(object, 'not_in'))) {
      this.error(segments, '"exists": false cannot be combined with "in" or "not_in": it could never match');
    }
    return {
      kind: 'operators',
      ...(allowed && { in: allowed }),
      ...(excluded && { notIn: excluded }),
      ...(typeof exists === 'boolean' && { exists }),
    };
  }

  private valueList(value: unknown, segments: Segments): JsonValue[] | undefined {
    if (!Array.isArray(value)) {
      this.error(segments, 'must be an array of values');
      return undefined;
    }
    if (value.length === 0) {
      this.error(segments, 'must list at least one value');
      return undefined;
    }
    const invalid = value.findIndex((item) => !isJsonValue(item, MAX_DEPTH));
    if (invalid >= 0) {
      this.error([...segments, invalid], `must be a JSON value nested at most ${MAX_DEPTH} levels deep`);
      return undefined;
    }
    return value as JsonValue[];
  }
}

/** A plain object, as JSON.parse builds: not an array, a Date, a Map or a class instance. */
function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

function isJsonValue(value: unknown, depth: number): boolean {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value);
    case 'object':
      if (value === null) return true;
      if (depth === 0) return false;
      if (Array.isArray(value)) return value.every((item) => isJsonValue(item, depth - 1));
      return isPlainObject(value) && Object.values(value).every((item) => isJsonValue(item, depth - 1));
    default:
      return false;
  }
}
