import { parse as parseQueryString } from 'node:querystring';
import { listRunsRequest } from '@conveyor/proto';
import { parseRunListQuery } from './run-list-query';

// Query objects exactly as express 5's default "simple" parser (Node's querystring) produces them.
const parse = (search: string) => parseRunListQuery({ ...parseQueryString(search) });

const fail = (search: string): string => {
  try {
    parse(search);
  } catch (err) {
    expect(err).toMatchObject({ code: 'invalid_request' });
    return (err as Error).message;
  }
  throw new Error(`accepted ${search}`);
};

describe('GET /agent/runs query', () => {
  it('maps an empty query to defaults the orchestrator fills in', () => {
    const { caller: _caller, ...defaults } = listRunsRequest();
    expect(parse('')).toEqual(defaults);
  });

  it('reads every parameter as the SDK sends it', () => {
    const request = parse(
      'limit=50&sort_by=agent&sort_order=asc&state=QUEUED&state=INPROGRESS&name=nightly&model_id=m&creator=u&executor=a&source=API' +
        '&execution_location=REMOTE&created_after=2019-12-27T18%3A11%3A19.117Z&created_before=2020-01-01T00:00:00%2B01:00' +
        '&updated_after=2019-12-27T18:11:19Z&environment_id=empty-environment&skill=acme%2Fapi%3ASKILL.md&schedule_id=s' +
        '&ancestor_run_id=r&metadata%5Bticket_id%5D=VIS-238&metadata%5Bteam%5D=&artifact_type=PLAN&q=%20deploy%20&automation_id=au&cursor=abc',
    );
    expect(request).toEqual({
      limit: 50,
      cursor: 'abc',
      sort_by: 'agent',
      sort_order: 'asc',
      states: ['QUEUED', 'INPROGRESS'],
      name: 'nightly',
      model_id: 'm',
      creator: 'u',
      executor: 'a',
      source: 'API',
      execution_location: 'REMOTE',
      created_after: '2019-12-27T18:11:19.117Z',
      created_before: '2020-01-01T00:00:00+01:00',
      updated_after: '2019-12-27T18:11:19Z',
      environment_id: 'empty-environment',
      skill_spec: 'acme/api:SKILL.md',
      schedule_id: 's',
      ancestor_run_id: 'r',
      metadata: { ticket_id: 'VIS-238', team: '' },
      artifact_type: 'PLAN',
      q: 'deploy',
      automation_id: 'au',
      factory_uid: '',
    });
  });

  it('treats empty values (the SDK sends null as k=) as absent and ignores unknown parameters', () => {
    expect(parse('limit=&state=&environment_id=&q=&whatever=1')).toMatchObject({
      limit: 0,
      states: [],
      q: '',
    });
    expect(parse('environment_id=').environment_id).toBeUndefined();
  });

  it('sends timestamps normalized to upper-case T and Z, keeping the offset and fraction', () => {
    expect(
      parse('created_after=2019-12-27t18:11:19.123456z&updated_after=2019-12-27 18:11:19%2B02:00'),
    ).toMatchObject({
      created_after: '2019-12-27T18:11:19.123456Z',
      updated_after: '2019-12-27T18:11:19+02:00',
    });
  });

  it('sends a blank q as no search', () => {
    expect(parse('q=%20%20%20').q).toBe('');
  });

  it('accepts skill and skill_spec together only when they agree', () => {
    expect(parse('skill=a:b&skill_spec=a:b').skill_spec).toBe('a:b');
    expect(fail('skill=a:b&skill_spec=c:d')).toMatch(/^skill: /);
  });

  it.each([
    ['limit=0', /^limit: must be between 1 and 100$/],
    ['limit=101', /^limit: /],
    ['limit=ten', /^limit: /],
    ['limit=-5', /^limit: /],
    ['limit=1&limit=2', /^limit: must be given once$/],
    ['sort_by=priority', /^sort_by: must be one of updated_at, created_at, title, agent$/],
    ['sort_order=down', /^sort_order: /],
    ['sort_order=DESC', /^sort_order: must be one of asc, desc$/],
    ['state=QUEUED&state=DONE', /^state\.1: must be one of /],
    ['source=EMAIL', /^source: /],
    ['source=api', /^source: /],
    ['execution_location=CLOUD', /^execution_location: /],
    ['artifact_type=VIDEO', /^artifact_type: /],
    ['created_after=yesterday', /^created_after: must be an RFC 3339 timestamp/],
    ['created_before=2019-12-27', /^created_before: /],
    ['updated_after=2019-02-30T00:00:00Z', /^updated_after: /],
    ['updated_after=1577470279', /^updated_after: /],
    ['environment_id=env-123', /^environment_id: must be 22 letters and digits, or empty-environment$/],
    ['environment_id=AbCdEfGhIjKlMnOpQrStU!', /^environment_id: /],
    ['metadata=x', /^metadata: /],
    ['metadata%5Ba%20b%5D=1', /^metadata\[a b\]: /],
    ['metadata%5Bk%5D=1&metadata%5Bk%5D=2', /^metadata\[k\]: must be given once$/],
    [`metadata%5Bk%5D=${'x'.repeat(257)}`, /^metadata\[k\]: values are at most 256 bytes without NUL$/],
    ['metadata%5Bk%5D=a%00', /^metadata\[k\]: values are at most 256 bytes without NUL$/],
    [`automation_id=${'x'.repeat(257)}`, /^automation_id: must be at most 256 bytes without NUL$/],
    [
      'metadata[a]=1&metadata[b]=2&metadata[c]=3&metadata[d]=4&metadata[e]=5&metadata[f]=6',
      /^metadata: at most 5 pairs$/,
    ],
    [`q=${'x'.repeat(201)}`, /^q: /],
    ['name=a&name=b', /^name: must be given once$/],
    ['q=ab', /^q: needs at least one word of 3 or more characters$/],
    ['q=a+b+c+d+e+f+g+h+i', /^q: must be at most 8 words$/],
  ])('rejects %s', (search, message) => {
    expect(fail(search)).toMatch(message);
  });
});
