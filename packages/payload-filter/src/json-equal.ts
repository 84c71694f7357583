export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** A JSON object: not null, not an array. */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Strict JSON deep equality: no coercion (`"1"` is not `1`), arrays compare element by element, objects by their
 * own keys in any order. Recursion is bounded by the depth of `expected`, which comes from a validated filter.
 */
export function jsonEqual(actual: unknown, expected: JsonValue): boolean {
  if (actual === expected) return true;
  if (typeof expected !== 'object' || expected === null || typeof actual !== 'object' || actual === null)
    return false;
  if (Array.isArray(expected)) {
    return (
      Array.isArray(actual) &&
      actual.length === expected.length &&
      expected.every((item, index) => jsonEqual(actual[index], item))
    );
  }
  if (Array.isArray(actual)) return false;
  const keys = Object.keys(expected);
  return (
    Object.keys(actual).length === keys.length &&
    keys.every(
      (key) =>
        Object.hasOwn(actual, key) &&
        jsonEqual((actual as Record<string, unknown>)[key], expected[key] as JsonValue),
    )
  );
}
