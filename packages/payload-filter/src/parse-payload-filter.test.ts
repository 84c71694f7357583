import { parsePayloadFilter } from './parse-payload-filter';

const errorsOf = (input: unknown) => {
  const result = parsePayloadFilter(input);
  return result.ok ? [] : result.errors;
};

describe('parsePayloadFilter', () => {
  it.each([
    ['the empty filter', {}],
    [
      'allowed-value lists',
      { action: ['opened', 'reopened'], number: [1, 2], draft: [false], merged_by: [null] },
    ],
    ['lists of objects and arrays', { sender: [{ login: 'a' }], pair: [[1, 2]] }],
    ['operators', { a: { in: [1] }, b: { not_in: ['x'] }, c: { exists: true }, d: { exists: false } }],
    ['combined operators', { a: { in: [1, 2], not_in: [2], exists: true } }],
    ['nested fields', { pull_request: { base: { ref: ['main'] }, draft: { exists: false } } }],
    ['root keys named like operators', { in: [1], not_in: { exists: true }, exists: { in: [true] } }],
  ])('accepts %s', (_name, input) => {
    expect(parsePayloadFilter(input).ok).toBe(true);
  });

  it('compiles lists, operators and nesting', () => {
    expect(
      parsePayloadFilter({ a: [1], b: { not_in: ['x'], exists: true }, c: { d: { in: [null] } } }),
    ).toEqual({
      ok: true,
      filter: {
        fields: [
          { key: 'a', condition: { kind: 'operators', in: [1] } },
          { key: 'b', condition: { kind: 'operators', notIn: ['x'], exists: true } },
          {
            key: 'c',
            condition: {
              kind: 'nested',
              filter: { fields: [{ key: 'd', condition: { kind: 'operators', in: [null] } }] },
            },
          },
        ],
      },
    });
  });

  it.each([
    ['null', null],
    ['an array', [{ action: ['opened'] }]],
    ['a string', '{"action":["opened"]}'],
    ['a number', 1],
    ['undefined', undefined],
    ['a Date', new Date(0)],
  ])('rejects %s as the filter', (_name, input) => {
    expect(errorsOf(input)).toEqual([
      { path: 'filter.payload', message: expect.stringContaining('must be an object') },
    ]);
  });

  it.each([
    [
      'a bare string value',
      { action: 'opened' },
      'filter.payload.action',
      'must be an array of allowed values',
    ],
    ['a bare number value', { n: 1 }, 'filter.payload.n', 'must be an array of allowed values'],
    ['a bare null value', { n: null }, 'filter.payload.n', 'must be an array of allowed values'],
    ['a bare boolean value', { n: true }, 'filter.payload.n', 'must be an array of allowed values'],
    ['an empty list', { action: [] }, 'filter.payload.action', 'at least one value'],
    ['in that is not an array', { action: { in: 'opened' } }, 'filter.payload.action.in', 'must be an array'],
    ['an empty in', { action: { in: [] } }, 'filter.payload.action.in', 'at least one value'],
    [
      'not_in that is not an array',
      { action: { not_in: { x: 1 } } },
      'filter.payload.action.not_in',
      'must be an array',
    ],
    ['an empty not_in', { action: { not_in: [] } }, 'filter.payload.action.not_in', 'at least one value'],
    [
      'exists that is not a boolean',
      { draft: { exists: 'yes' } },
      'filter.payload.draft.exists',
      'true or false',
    ],
    ['exists: null', { draft: { exists: null } }, 'filter.payload.draft.exists', 'true or false'],
    ['an empty object', { draft: {} }, 'filter.payload.draft', 'must not be an empty object'],
    ['an empty nested object', { pr: { base: {} } }, 'filter.payload.pr.base', 'must not be an empty object'],
    [
      'operators mixed with fields',
      { action: { in: ['x'], foo: ['y'] } },
      'filter.payload.action',
      'mixes operators (in) with other keys (foo)',
    ],
    [
      'an unknown operator beside a known one',
      { action: { in: ['x'], nin: ['y'] } },
      'filter.payload.action',
      'mixes operators',
    ],
    [
      'an unknown operator with a scalar',
      { action: { eq: 'opened' } },
      'filter.payload.action.eq',
      'must be an array',
    ],
    ['exists: false with in', { a: { exists: false, in: [1] } }, 'filter.payload.a', 'could never match'],
    [
      'exists: false with not_in',
      { a: { exists: false, not_in: [1] } },
      'filter.payload.a',
      'could never match',
    ],
    ['a non-identifier key', { 'odd key': { in: 5 } }, 'filter.payload["odd key"].in', 'must be an array'],
    ['undefined in a list', { a: [1, undefined] }, 'filter.payload.a[1]', 'must be a JSON value'],
    ['NaN in a list', { a: { in: [NaN] } }, 'filter.payload.a.in[0]', 'must be a JSON value'],
    [
      'Infinity in a list',
      { a: { not_in: [1, 2, Infinity] } },
      'filter.payload.a.not_in[2]',
      'must be a JSON value',
    ],
    ['a Date in a list', { a: [new Date(0)] }, 'filter.payload.a[0]', 'must be a JSON value'],
    ['a function in a list', { a: [() => 1] }, 'filter.payload.a[0]', 'must be a JSON value'],
    ['a bigint in a list', { a: [1n] }, 'filter.payload.a[0]', 'must be a JSON value'],
    [
      'undefined inside a listed object',
      { a: [{ b: undefined }] },
      'filter.payload.a[0]',
      'must be a JSON value',
    ],
  ])('rejects %s, naming the path', (_name, input, path, message) => {
    expect(errorsOf(input)).toEqual([{ path, message: expect.stringContaining(message) }]);
  });

  it('rejects nesting deeper than 32 levels', () => {
    let deep: unknown = { leaf: [1] };
    for (let i = 0; i < 40; i++) deep = { n: deep };
    expect(errorsOf(deep)).toEqual([
      {
        path: expect.stringMatching(/^filter\.payload(\.n){33}$/),
        message: expect.stringContaining('32 levels'),
      },
    ]);
    let deepValue: unknown = 1;
    for (let i = 0; i < 40; i++) deepValue = [deepValue];
    expect(errorsOf({ a: [deepValue] })).toEqual([
      { path: 'filter.payload.a[0]', message: expect.stringContaining('32 levels') },
    ]);
  });

  it('reports every problem at once', () => {
    expect(errorsOf({ a: 'x', b: { in: 1 }, c: { d: { exists: 1 } } }).map((e) => e.path)).toEqual([
      'filter.payload.a',
      'filter.payload.b.in',
      'filter.payload.c.d.exists',
    ]);
  });

  it('prefixes paths with the given location', () => {
    expect(parsePayloadFilter({ a: 'x' }, { path: 'triggers[0].filter.payload' })).toEqual({
      ok: false,
      errors: [{ path: 'triggers[0].filter.payload.a', message: expect.any(String) }],
    });
  });

  it('parses what JSON.parse gives, including odd keys', () => {
    expect(
      parsePayloadFilter(JSON.parse('{"__proto__": {"constructor": ["x"]}, "": {"exists": true}}')).ok,
    ).toBe(true);
    expect(parsePayloadFilter(Object.assign(Object.create(null), { a: [1] })).ok).toBe(true);
  });
});
