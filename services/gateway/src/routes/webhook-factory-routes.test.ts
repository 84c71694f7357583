import type { Factory__Output } from '@conveyor/proto';
import { CALLER, problemOf, refusedPaths, routeHarness } from '../test-support/route-harness';
import { webhookFactoryEndpoints } from './webhook-factory-routes';

const factory = (overrides: Partial<Factory__Output> = {}): Factory__Output => ({
  factory_id: 'fac_1',
  name: 'Team A',
  webhook_count: 2,
  automation_count: 3,
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-02T00:00:00.000Z',
  ...overrides,
});

describe('factory routes', () => {
  const { call, send, onlyCall, itMapsOrchestratorErrors } = routeHarness(webhookFactoryEndpoints);

  // A factory's JSON is its gRPC fields as they are.
  it('creates a factory with one CreateFactory call (name trimmed) and answers 201 with it', async () => {
    call.mockResolvedValue(factory());
    const res = await send('POST', '/factories', { name: ' Team A ' });
    expect(res.status).toBe(201);
    expect(await res.json()).toEqual(factory());
    expect(onlyCall()).toEqual(['factories', 'CreateFactory', { caller: CALLER, name: 'Team A' }]);
  });

  it.each([['a blank name', { name: '  ' }, 'name']])(
    'refuses a create body with %s without calling the orchestrator',
    async (_what, body, path) => {
      expect(await refusedPaths(await send('POST', '/factories', body))).toEqual([path]);
      expect(call).not.toHaveBeenCalled();
    },
  );

  it('refuses a create body with a field it does not take, naming it, without calling the orchestrator', async () => {
    expect(await problemOf(await send('POST', '/factories', { name: 'A', owner: 'me' }), 400)).toMatchObject({
      detail: expect.stringContaining("'owner'"),
    });
    expect(call).not.toHaveBeenCalled();
  });

  it('lists, reads and deletes factories, each with one call', async () => {
    call.mockResolvedValueOnce({ factories: [factory(), factory({ factory_id: 'fac_2' })] });
    const list = (await (await send('GET', '/factories')).json()) as { factories: unknown[] };
    expect(list.factories).toEqual([factory(), factory({ factory_id: 'fac_2' })]);
    expect(onlyCall()).toEqual(['factories', 'ListFactories', { caller: CALLER }]);

    call.mockReset();
    call.mockResolvedValueOnce(factory());
    expect(await (await send('GET', '/factories/fac_1')).json()).toEqual(factory());
    expect(onlyCall()).toEqual(['factories', 'GetFactory', { caller: CALLER, factory_id: 'fac_1' }]);

    call.mockReset();
    call.mockResolvedValueOnce({});
    const deleted = await send('DELETE', '/factories/fac_1');
    expect(deleted.status).toBe(204);
    expect(await deleted.text()).toBe('');
    expect(onlyCall()).toEqual(['factories', 'DeleteFactory', { caller: CALLER, factory_id: 'fac_1' }]);
  });

  it('applies definitions given as files and by kind as one list of files, and answers what was applied', async () => {
    call.mockResolvedValue({
      webhooks: [{ name: 'github', id: 'wh_abc', action: 'created', url: 'https://hooks.test/wh_abc' }],
      automations: [{ name: 'triage', id: 'aut_1', action: 'updated', url: '' }],
      integrations: [
        {
          name: 'acme',
          kind: 'slack',
          id: 'sla_1',
          action: 'updated',
          url: 'https://hooks.test/wh_s',
          changed: ['allowed_channels'],
        },
      ],
    });
    const res = await send('POST', '/factories/fac_1/apply', {
      files: [{ path: 'webhooks/linear.yaml', content: 'name: linear' }],
      webhooks: [{ name: 'github', yaml: 'name: github' }],
      automations: [{ name: 'triage', yaml: 'name: triage' }],
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      webhooks: [
        { name: 'github', webhook_uid: 'wh_abc', action: 'created', url: 'https://hooks.test/wh_abc' },
      ],
      automations: [{ name: 'triage', automation_id: 'aut_1', action: 'updated' }],
      integrations: [
        {
          name: 'acme',
          kind: 'slack',
          integration_id: 'sla_1',
          action: 'updated',
          url: 'https://hooks.test/wh_s',
          changed: ['allowed_channels'],
        },
      ],
    });
    expect(onlyCall()).toEqual([
      'factories',
      'ApplyDefinitions',
      {
        caller: CALLER,
        factory_id: 'fac_1',
        files: [
          { path: 'webhooks/linear.yaml', content: 'name: linear' },
          { path: 'webhooks/github.yaml', content: 'name: github' },
          { path: 'automations/triage.yaml', content: 'name: triage' },
        ],
      },
    ]);
  });

  it.each([
    ['no definition file', {}, 'files'],
    [
      'a file over 256 KiB',
      { files: [{ path: 'webhooks/a.yaml', content: 'x'.repeat(256 * 1024 + 1) }] },
      'files.0.content',
    ],
  ])('refuses an apply body with %s without calling the orchestrator', async (_what, body, path) => {
    expect(await refusedPaths(await send('POST', '/factories/fac_1/apply', body))).toEqual([path]);
    expect(call).not.toHaveBeenCalled();
  });

  itMapsOrchestratorErrors([
    ['resource_not_found', 404, 'GET', '/factories/fac_x'],
    ['conflict', 409, 'DELETE', '/factories/fac_1'],
    [
      'invalid_request',
      400,
      'POST',
      '/factories/fac_1/apply',
      { webhooks: [{ name: 'a', yaml: 'auth_mode: ?' }] },
    ],
    ['not_authorized', 403, 'POST', '/factories', { name: 'B' }],
  ]);
});
