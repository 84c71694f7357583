import type { Secret__Output } from '@conveyor/proto';
import { CALLER, refusedPaths, routeHarness } from '../test-support/route-harness';
import { webhookSecretEndpoints } from './webhook-secret-routes';

const secret = (overrides: Partial<Secret__Output> = {}): Secret__Output => ({
  name: 'github-secret',
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-02T00:00:00.000Z',
  used_by_webhooks: ['wh_abc'],
  ...overrides,
});

// A secret's JSON is its gRPC fields as they are: metadata only, the value is never answered.
describe('team secret routes', () => {
  const { call, send, onlyCall, itMapsOrchestratorErrors } = routeHarness(webhookSecretEndpoints);

  it('creates a secret with one CreateSecret call and answers 201 without the value', async () => {
    call.mockResolvedValue(secret());
    const res = await send('POST', '/secrets', { name: 'github-secret', value: 's3cret' });
    expect(res.status).toBe(201);
    expect(await res.json()).toEqual(secret());
    expect(onlyCall()).toEqual([
      'factories',
      'CreateSecret',
      { caller: CALLER, name: 'github-secret', value: 's3cret' },
    ]);
  });

  it.each([
    ['an empty value', 'value', { name: 'a', value: '' }],
    ['no name', 'name', { value: 'v' }],
  ])('refuses a create body with %s without calling the orchestrator', async (_what, path, body) => {
    expect(await refusedPaths(await send('POST', '/secrets', body))).toEqual([path]);
    expect(call).not.toHaveBeenCalled();
  });

  it('lists, reads, sets and deletes secrets by name, each with one call', async () => {
    call.mockResolvedValueOnce({ secrets: [secret()] });
    expect(await (await send('GET', '/secrets')).json()).toEqual({ secrets: [secret()] });
    expect(onlyCall()).toEqual(['factories', 'ListSecrets', { caller: CALLER }]);

    call.mockReset();
    call.mockResolvedValueOnce(secret());
    expect(await (await send('GET', '/secrets/github-secret')).json()).toEqual(secret());
    expect(onlyCall()).toEqual(['factories', 'GetSecret', { caller: CALLER, name: 'github-secret' }]);

    call.mockReset();
    call.mockResolvedValueOnce(secret());
    expect((await send('PUT', '/secrets/github-secret', { value: 'new' })).status).toBe(200);
    expect(onlyCall()).toEqual([
      'factories',
      'SetSecretValue',
      { caller: CALLER, name: 'github-secret', value: 'new' },
    ]);

    call.mockReset();
    call.mockResolvedValueOnce({});
    expect((await send('DELETE', '/secrets/github-secret')).status).toBe(204);
    expect(onlyCall()).toEqual(['factories', 'DeleteSecret', { caller: CALLER, name: 'github-secret' }]);
  });

  it('refuses a PUT that renames the secret', async () => {
    expect((await send('PUT', '/secrets/github-secret', { name: 'other', value: 'v' })).status).toBe(400);
    expect(call).not.toHaveBeenCalled();
  });

  itMapsOrchestratorErrors([
    ['conflict', 409, 'POST', '/secrets', { name: 'taken', value: 'v' }],
    ['resource_not_found', 404, 'GET', '/secrets/missing'],
    ['conflict', 409, 'DELETE', '/secrets/in-use'],
    ['not_authorized', 403, 'PUT', '/secrets/github-secret', { value: 'v' }],
  ]);
});
