import { matchPayload } from './match-payload';
import { parsePayloadFilter } from './parse-payload-filter';

/** Parses (the filter must be valid) and matches. */
function match(filter: unknown, payload: unknown) {
  const parsed = parsePayloadFilter(filter);
  if (!parsed.ok) throw new Error(`invalid test filter: ${JSON.stringify(parsed.errors)}`);
  return matchPayload(parsed.filter, payload);
}

type Case = [name: string, filter: unknown, payload: unknown, matched: boolean];

const cases: Record<string, Case[]> = {
  'keys are ANDed': [
    ['all keys match', { a: [1], b: [2] }, { a: 1, b: 2, c: 3 }, true],
    ['one key fails', { a: [1], b: [2] }, { a: 1, b: 3 }, false],
  ],
  'a leaf array is an OR under strict JSON equality': [
    ['one of several', { a: [1, 2] }, { a: 2 }, true],
    ['none of several', { a: [1, 2] }, { a: 3 }, false],
    ['"1" is not 1', { a: ['1'] }, { a: 1 }, false],
    ['1 is not "1"', { a: [1] }, { a: '1' }, false],
    ['true is not "true"', { a: [true] }, { a: 'true' }, false],
    ['0 is not false', { a: [0] }, { a: false }, false],
    ['null is not 0', { a: [null] }, { a: 0 }, false],
    ['"" is not null', { a: [''] }, { a: null }, false],
    ['1 is 1.0', { a: [1] }, JSON.parse('{"a": 1.0}'), true],
    [
      'objects compare deeply, in any key order',
      { a: [{ x: 1, y: [1, 2] }] },
      { a: { y: [1, 2], x: 1 } },
      true,
    ],
    ['an extra key breaks object equality', { a: [{ x: 1 }] }, { a: { x: 1, z: 0 } }, false],
    ['an object with numeric keys equals only an object', { a: [{ 0: 1 }] }, { a: { 0: 1 } }, true],
    ['an object is not an array', { a: [{ 0: 1 }] }, { a: [[1]] }, false],
    ['case matters', { a: ['Opened'] }, { a: 'opened' }, false],
  ],
  'in is the same as a bare array': [
    ['allowed', { a: { in: ['x', 'y'] } }, { a: 'y' }, true],
    ['not allowed', { a: { in: ['x', 'y'] } }, { a: 'z' }, false],
    ['missing', { a: { in: ['x'] } }, {}, false],
  ],
  'not_in requires presence': [
    ['not excluded', { a: { not_in: ['x'] } }, { a: 'y' }, true],
    ['excluded', { a: { not_in: ['x'] } }, { a: 'x' }, false],
    ['missing fails closed', { a: { not_in: ['x'] } }, {}, false],
    ['null is present and not excluded', { a: { not_in: ['x'] } }, { a: null }, true],
    ['null excluded', { a: { not_in: [null] } }, { a: null }, false],
    ['"1" not excluded by 1', { a: { not_in: [1] } }, { a: '1' }, true],
  ],
  'exists checks presence, and null is present': [
    ['exists: true, present', { a: { exists: true } }, { a: 0 }, true],
    ['exists: true, null', { a: { exists: true } }, { a: null }, true],
    ['exists: true, missing', { a: { exists: true } }, {}, false],
    ['exists: false, missing', { a: { exists: false } }, { b: 1 }, true],
    ['exists: false, null', { a: { exists: false } }, { a: null }, false],
    ['exists: false, present', { a: { exists: false } }, { a: 'x' }, false],
    ['allowed null', { a: [null] }, { a: null }, true],
  ],
  'operators in one object are ANDed': [
    ['in and not_in both pass', { a: { in: [1, 2], not_in: [2] } }, { a: 1 }, true],
    ['not_in fails', { a: { in: [1, 2], not_in: [2] } }, { a: 2 }, false],
    ['exists: true and in', { a: { exists: true, in: [1] } }, { a: 1 }, true],
  ],
  'nested objects recurse; a missing parent fails all but exists: false': [
    ['nested match', { pr: { base: { ref: ['main'] } } }, { pr: { base: { ref: 'main' } } }, true],
    ['nested mismatch', { pr: { base: { ref: ['main'] } } }, { pr: { base: { ref: 'dev' } } }, false],
    ['missing leaf', { pr: { base: { ref: ['main'] } } }, { pr: { base: {} } }, false],
    ['missing parent', { pr: { base: { ref: ['main'] } } }, { pr: {} }, false],
    ['missing grandparent', { pr: { base: { ref: ['main'] } } }, {}, false],
    ['parent is a scalar', { pr: { draft: [false] } }, { pr: 'draft' }, false],
    ['parent is null', { pr: { draft: [false] } }, { pr: null }, false],
    ['not_in under a missing parent', { pr: { ref: { not_in: ['x'] } } }, {}, false],
    ['exists: true under a missing parent', { pr: { ref: { exists: true } } }, {}, false],
    ['exists: false under a missing parent', { pr: { ref: { exists: false } } }, {}, true],
    ['exists: false under a scalar parent', { pr: { ref: { exists: false } } }, { pr: 1 }, true],
    ['exists: false, nested and present', { pr: { ref: { exists: false } } }, { pr: { ref: null } }, false],
  ],
  'arrays of scalars: any element for lists and in, none for not_in': [
    ['an element allowed', { tags: ['bug'] }, { tags: ['ui', 'bug'] }, true],
    ['no element allowed', { tags: ['bug'] }, { tags: ['ui'] }, false],
    ['empty array fails a list', { tags: ['bug'] }, { tags: [] }, false],
    ['empty array fails in', { tags: { in: ['bug'] } }, { tags: [] }, false],
    ['no element excluded', { tags: { not_in: ['wontfix'] } }, { tags: ['bug', 'ui'] }, true],
    ['an element excluded', { tags: { not_in: ['wontfix'] } }, { tags: ['bug', 'wontfix'] }, false],
    ['empty array passes not_in', { tags: { not_in: ['wontfix'] } }, { tags: [] }, true],
    ['empty array passes exists: true', { tags: { exists: true } }, { tags: [] }, true],
    ['empty array fails exists: false', { tags: { exists: false } }, { tags: [] }, false],
    ['elements compare strictly', { ids: [1] }, { ids: ['1', '2'] }, false],
    ['an array element that is an array', { pairs: [[1, 2]] }, { pairs: [[0], [1, 2]] }, true],
    ['the array as a whole is never compared', { tags: [['a', 'b']] }, { tags: ['a', 'b'] }, false],
    ['an allowed [] never matches an empty array', { tags: [[]] }, { tags: [] }, false],
  ],
  'arrays of objects: one element must satisfy the whole sub-filter': [
    [
      'an element matches',
      { labels: { name: ['bug'] } },
      { labels: [{ name: 'ui' }, { name: 'bug' }] },
      true,
    ],
    ['no element matches', { labels: { name: ['bug'] } }, { labels: [{ name: 'ui' }] }, false],
    ['empty array', { labels: { name: ['bug'] } }, { labels: [] }, false],
    [
      'conditions split across elements do not match',
      { labels: { name: ['bug'], color: ['red'] } },
      {
        labels: [
          { name: 'bug', color: 'blue' },
          { name: 'ui', color: 'red' },
        ],
      },
      false,
    ],
    [
      'one element satisfying all conditions',
      { labels: { name: ['bug'], color: ['red'] } },
      { labels: [{ name: 'ui' }, { name: 'bug', color: 'red' }] },
      true,
    ],
    ['scalar elements have no fields', { labels: { name: ['bug'] } }, { labels: ['bug'] }, false],
    [
      'exists: false satisfied by an element lacking the field',
      { labels: { color: { exists: false } } },
      { labels: [{ color: 'red' }, {}] },
      true,
    ],
    [
      'exists: false with an empty array: no element',
      { labels: { color: { exists: false } } },
      { labels: [] },
      false,
    ],
    ['only one array level is looked through', { a: { b: [1] } }, { a: [[{ b: 1 }]] }, false],
    [
      'deeper arrays through nested objects',
      { a: { b: { c: [1] } } },
      { a: [{ b: [{ c: 2 }, { c: 1 }] }] },
      true,
    ],
  ],
  'the root': [
    ['{} matches an object', {}, { a: 1 }, true],
    ['{} matches null', {}, null, true],
    ['{} matches an empty array', {}, [], true],
    ['{} matches a string', {}, 'x', true],
    ['a scalar payload has no fields', { a: [1] }, 5, false],
    ['exists: false against a scalar payload', { a: { exists: false } }, 'x', true],
    ['an array payload: one element must match', { a: [1] }, [{ a: 2 }, { a: 1 }], true],
    ['an empty array payload', { a: [1] }, [], false],
    [
      'root keys named like operators are fields',
      { in: [1], exists: { exists: true } },
      { in: 1, exists: 0 },
      true,
    ],
  ],
  'keys are own properties, matched literally': [
    ['inherited constructor is absent', { constructor: { exists: false } }, {}, true],
    ['inherited toString is absent', { toString: { exists: true } }, {}, false],
    ['own __proto__', JSON.parse('{"__proto__": [1]}'), JSON.parse('{"__proto__": 1}'), true],
    ['absent __proto__', JSON.parse('{"__proto__": {"exists": true}}'), {}, false],
    ['a dotted key is one key', { 'a.b': [1] }, { 'a.b': 1 }, true],
    ['a dotted key is not a path', { 'a.b': [1] }, { a: { b: 1 } }, false],
    ['empty key', { '': [1] }, { '': 1 }, true],
  ],
};

describe('matchPayload', () => {
  for (const [rule, table] of Object.entries(cases)) {
    describe(rule, () => {
      it.each(table)('%s', (_name, filter, payload, matched) => {
        const result = match(filter, payload);
        expect(result.matched).toBe(matched);
        expect(result.mismatches.length === 0).toBe(matched);
      });
    });
  }

  it('reports every failing path, not only the first', () => {
    expect(
      match(
        {
          action: ['opened'],
          pull_request: { draft: { exists: false }, base: { ref: ['main'] } },
          sender: { login: { not_in: ['bot'] } },
        },
        { action: 'closed', pull_request: { draft: null, base: { ref: 'main' } }, sender: { login: 'bot' } },
      ).mismatches,
    ).toEqual([
      'payload.action: "closed" is not an allowed value',
      'payload.pull_request.draft: present, expected absent',
      'payload.sender.login: "bot" is excluded by not_in',
    ]);
  });

  it.each([
    [{ a: [1] }, {}, 'payload.a: missing'],
    [{ a: { b: [1] } }, {}, 'payload.a.b: missing'],
    [{ 'odd key': [1] }, { 'odd key': 2 }, 'payload["odd key"]: 2 is not an allowed value'],
    [{ a: [1] }, { a: [] }, 'payload.a: empty array, no element is an allowed value'],
    [{ a: [1] }, { a: [2, 3] }, 'payload.a: no array element is an allowed value'],
    [{ a: [1] }, { a: { b: 1 } }, 'payload.a: an object is not an allowed value'],
    [{ a: { not_in: [null] } }, { a: [1, null] }, 'payload.a: element null is excluded by not_in'],
    [{ a: { b: [1] } }, { a: [] }, 'payload.a: empty array, no element to match'],
    [{ a: { b: [1] } }, { a: [{ b: 2 }] }, 'payload.a: no array element matches'],
    [{ a: [1] }, [{ a: 2 }], 'payload: no array element matches'],
    [{ a: ['x'] }, { a: 'y'.repeat(500) }, `payload.a: "${'y'.repeat(37)}…" is not an allowed value`],
  ])('explains %j against %j', (filter, payload, mismatch) => {
    expect(match(filter, payload).mismatches).toEqual([mismatch]);
  });

  it('does not throw on deeply nested payloads', () => {
    const deep = JSON.parse(`{"a":${'['.repeat(50_000)}${']'.repeat(50_000)}}`);
    expect(match({ a: { b: [1] } }, deep).matched).toBe(false);
    expect(match({ a: [[[1]]] }, deep).matched).toBe(false);
  });
});
