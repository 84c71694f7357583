import { listRunsRequest, type ListRunsRequest__Output } from '@conveyor/proto';
import { encodeRunCursor } from './run-cursor';
import { parseRunListRequest } from './run-list-filters';

const parse = (overrides: Partial<ListRunsRequest__Output>) =>
  parseRunListRequest(listRunsRequest(overrides));

// Values arrive validated by the gateway (services/gateway/src/schemas/run-list-query.test.ts covers every
// rejection); this maps them and decodes the cursor, which only the orchestrator can.
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
      created_before: '2019-12-28T00:00:00+01:00',
      updated_after: '2019-12-27T18:11:19Z',
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
    expect(parse({ q: '   ', metadata: {} }).filters).toEqual({});
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

  it('answers invalid_request for a malformed cursor', () => {
    let thrown: unknown;
    try {
      parse({ cursor: 'garbage' });
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toMatchObject({
      code: 'invalid_request',
      httpStatus: 400,
      message: 'cursor is malformed',
    });
  });
});
