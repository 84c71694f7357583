import { listRunsRequest, type ListRunsRequest__Output } from '@conveyor/proto';
import { encodeRunCursor } from './run-cursor';
import { parseRunListRequest } from './run-list-filters';

const parse = (overrides: Partial<ListRunsRequest__Output>) =>
  parseRunListRequest(listRunsRequest(overrides));

describe('parseRunListRequest', () => {
  it('applies the defaults: 20 runs, updated_at desc, no filters', () => {
    expect(parse({})).toEqual({
      limit: 20,
      sortBy: 'updated_at',
      sortOrder: 'desc',
      cursor: undefined,
      filters: {},
    });
  });

  it('maps every filter', () => {
    const query = parse({
      limit: 100,
      sort_by: 'agent',
      sort_order: 'asc',
      states: ['QUEUED', 'FAILED', 'QUEUED'],
      name: 'nightly',
      model_id: 'm',
      creator: 'u1',
      executor: 'a1',
      source: 'API',
      execution_location: 'REMOTE',
      created_after: '2019-12-27T18:11:19.117Z',
      created_before: '2019-12-28t00:00:00+01:00',
      updated_after: '2019-12-27 18:11:19Z',
      environment_id: 'empty-environment',
      skill_spec: 'acme/api:SKILL.md',
      schedule_id: 's1',
      ancestor_run_id: 'r1',
      metadata: { ticket_id: 'VIS-238' },
      artifact_type: 'PLAN',
      q: '  Deploy  deploy API ',
      automation_id: 'auto',
      factory_uid: 'f1',
    });
    expect(query).toEqual({
      limit: 100,
      sortBy: 'agent',
      sortOrder: 'asc',
      cursor: undefined,
      filters: {
        states: ['QUEUED', 'FAILED'],
        configName: 'nightly',
        modelId: 'm',
        creatorId: 'u1',
        executorId: 'a1',
        source: 'API',
        executionLocation: 'REMOTE',
        createdAfter: '2019-12-27T18:11:19.117Z',
        createdBefore: '2019-12-28T00:00:00+01:00',
        updatedAfter: '2019-12-27T18:11:19Z',
        environmentId: null,
        skillSpec: 'acme/api:SKILL.md',
        scheduleId: 's1',
        ancestorRunId: 'r1',
        metadata: { ticket_id: 'VIS-238' },
        artifactType: 'PLAN',
        q: ['deploy', 'api'],
        automationId: 'auto',
        factoryUid: 'f1',
      },
    });
    expect(parse({ environment_id: 'AbCdEfGhIjKlMnOpQrStUv' }).filters).toEqual({
      environmentId: 'AbCdEfGhIjKlMnOpQrStUv',
    });
    expect(parse({ environment_id: '' }).filters).toEqual({});
    expect(parse({ q: '   ' }).filters).toEqual({});
  });

  it('decodes the cursor for the requested sort', () => {
    const cursor = {
      sortBy: 'title',
      sortOrder: 'asc' as const,
      value: 'a',
      id: '0b7d9c3e-5f6a-4b1c-8d2e-3f4a5b6c7d8e',
    };
    expect(parse({ sort_by: 'title', sort_order: 'asc', cursor: encodeRunCursor(cursor) }).cursor).toEqual(
      cursor,
    );
    expect(() => parse({ cursor: encodeRunCursor(cursor) })).toThrow(/different sort/);
  });

  it.each<[Partial<ListRunsRequest__Output>, RegExp]>([
    [{ limit: 101 }, /^limit: must be between 1 and 100$/],
    [{ limit: -5 }, /^limit: /],
    [{ sort_by: 'agents' }, /^sort_by: must be one of updated_at, created_at, title, agent$/],
    [{ sort_order: 'DESC' }, /^sort_order: /],
    [{ states: ['RUNNING'] }, /^state: /],
    [{ source: 'api' }, /^source: /],
    [{ execution_location: 'remote' }, /^execution_location: /],
    [{ artifact_type: 'pr' }, /^artifact_type: /],
    [{ created_after: '2019-12-27' }, /^created_after: /],
    [{ created_before: 'now' }, /^created_before: /],
    [{ updated_after: '1577470279' }, /^updated_after: /],
    [{ environment_id: 'short' }, /^environment_id: /],
    [{ environment_id: 'AbCdEfGhIjKlMnOpQrStU!' }, /^environment_id: /],
    [{ metadata: { a: '1', b: '2', c: '3', d: '4', e: '5', f: '6' } }, /^metadata: at most 5 pairs$/],
    [{ metadata: { 'bad key': 'v' } }, /^metadata\[bad key\]: /],
    [{ metadata: { k: 'x'.repeat(257) } }, /^metadata\[k\]: /],
    [{ metadata: { k: 'a\u0000' } }, /^metadata\[k\]: /],
    [{ automation_id: 'x'.repeat(257) }, /^automation_id: /],
    [{ q: 'x'.repeat(201) }, /^q: /],
    [{ q: 'ab' }, /^q: needs at least one word of 3 or more characters$/],
    [{ q: 'a b c d e f g h i' }, /^q: at most 8 words$/],
  ])('rejects %j', (overrides, message) => {
    expect(() => parse(overrides)).toThrow(message);
    try {
      parse(overrides);
    } catch (err) {
      expect(err).toMatchObject({ code: 'invalid_request', httpStatus: 400 });
    }
  });
});
