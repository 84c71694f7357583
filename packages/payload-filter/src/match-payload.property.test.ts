import fc from 'fast-check';
import { isJsonObject, type JsonValue } from './json-equal';
import { matchPayload } from './match-payload';
import { parsePayloadFilter } from './parse-payload-filter';
import { isFilterOperator } from './payload-filter';

function match(filter: unknown, payload: unknown): boolean {
  const parsed = parsePayloadFilter(filter);
  if (!parsed.ok) throw new Error(`generated an invalid filter: ${JSON.stringify(parsed.errors)}`);
  const result = matchPayload(parsed.filter, payload);
  // The explanation agrees with the verdict.
  expect(result.mismatches.length === 0).toBe(result.matched);
  return result.matched;
}

// Below the root an object whose keys are all operators is an operator object, so nested payload keys avoid them.
const nestedKey = fc.string({ maxLength: 6 }).filter((key) => !isFilterOperator(key));
const scalar = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer({ min: -3, max: 3 }),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.string({ maxLength: 4 }),
);
const { json } = fc.letrec<{ json: JsonValue }>((tie) => ({
  json: fc.oneof(
    { maxDepth: 4, depthSize: 'small' },
    scalar,
    fc.array(tie('json'), { maxLength: 4 }),
    fc.dictionary(nestedKey, tie('json'), { maxKeys: 4 }),
  ),
}));
const jsonObject = fc.dictionary(fc.string({ maxLength: 6 }), json, { maxKeys: 5 });

// A small vocabulary so generated filters and payloads meet often.
const key = fc.constantFrom('a', 'b', 'c');
const smallScalar = fc.constantFrom<JsonValue>(null, true, false, 0, 1, '1', 'x');
const { smallJson } = fc.letrec<{ smallJson: JsonValue }>((tie) => ({
  smallJson: fc.oneof(
    { maxDepth: 3 },
    smallScalar,
    fc.array(tie('smallJson'), { maxLength: 3 }),
    fc.dictionary(key, tie('smallJson'), { maxKeys: 3 }),
  ),
}));
const values = fc.array(smallScalar, { minLength: 1, maxLength: 3 });
const { filter, condition } = fc.letrec<{
  filter: Record<string, unknown>;
  condition: unknown;
  nested: Record<string, unknown>;
}>((tie) => ({
  condition: fc.oneof(
    { maxDepth: 3 },
    values,
    values.map((v) => ({ in: v })),
    values.map((v) => ({ not_in: v })),
    fc.boolean().map((exists) => ({ exists })),
    tie('nested'),
  ),
  nested: fc.dictionary(key, tie('condition'), { minKeys: 1, maxKeys: 3 }),
  filter: fc.dictionary(key, tie('condition'), { maxKeys: 3 }),
}));

/** A filter every leaf of `object` satisfies: scalars and objects as a one-value list, arrays as their own elements. */
function filterFrom(object: Record<string, JsonValue>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(object).map(([k, value]) => {
      if (Array.isArray(value)) return [k, value.length > 0 ? value : { exists: true }];
      if (isJsonObject(value) && Object.keys(value).length > 0)
        return [k, filterFrom(value as Record<string, JsonValue>)];
      return [k, [value]];
    }),
  );
}

describe('matchPayload properties', () => {
  it('{} matches any JSON value', () => {
    fc.assert(fc.property(fc.jsonValue(), (payload) => match({}, payload)));
  });

  it('a filter built from an object’s own leaves matches that object', () => {
    fc.assert(fc.property(jsonObject, (object) => match(filterFrom(object), object)));
  });

  it('in and not_in over the same set are complementary for a present field', () => {
    fc.assert(
      fc.property(smallJson, values, fc.boolean(), (value, set, includeValue) => {
        const members = includeValue ? [...set, value] : set;
        const payload = { a: value };
        expect(match({ a: { in: members } }, payload)).toBe(!match({ a: { not_in: members } }, payload));
      }),
    );
  });

  it('adding a key never turns a non-match into a match', () => {
    fc.assert(
      fc.property(filter, key, condition, smallJson, (base, extraKey, extra, payload) => {
        fc.pre(!Object.hasOwn(base, extraKey));
        if (!match(base, payload)) expect(match({ ...base, [extraKey]: extra }, payload)).toBe(false);
      }),
    );
  });

  it('exists: true and exists: false are complementary, through nested objects too', () => {
    const notArray = smallJson.filter((value) => !Array.isArray(value));
    fc.assert(
      fc.property(fc.dictionary(key, notArray), key, key, (payload, outer, inner) => {
        expect(match({ [outer]: { exists: true } }, payload)).toBe(
          !match({ [outer]: { exists: false } }, payload),
        );
        const nested = (exists: boolean) => ({ [outer]: { [inner]: { exists } } });
        expect(match(nested(true), payload)).toBe(!match(nested(false), payload));
      }),
    );
  });

  it('never throws on any filter and any JSON payload', () => {
    fc.assert(fc.property(filter, fc.jsonValue(), (f, payload) => void match(f, payload)));
  });
});
