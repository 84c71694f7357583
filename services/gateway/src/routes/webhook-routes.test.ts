import type { Delivery__Output, Webhook__Output } from '@conveyor/proto';
import { CALLER, problemOf, refusedPaths, routeHarness } from '../test-support/route-harness';
import { webhookEndpoints } from './webhook-routes';

const webhook = (overrides: Partial<Webhook__Output> = {}): Webhook__Output => ({
  webhook_uid: 'wh_abc',
  factory_id: 'fac_1',
  name: 'github',
  auth_mode: 'signature',
  signature_scheme: 'github',
  secret_name: 'github-secret',
  delivery_id_header: '',
  enabled: true,
  url: 'https://hooks.test/wh_abc',
  secret_status: 'set',
  managed_by: 'api',
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-02T00:00:00.000Z',
  ...overrides,
});
const delivery = (overrides: Partial<Delivery__Output> = {}): Delivery__Output => ({
  id: 'd-1',
  delivery_id: 'dlv-1',
  label: 'Accepted',
  size_bytes: 17,
  received_at: '2026-01-03T00:00:00.000Z',
  identity_source: 'provider_header',
  reason: '',
  run_ids: ['run-1'],
  payload: Buffer.alloc(0),
  has_payload: true,
  outcome_json: '',
  processed_at: '2026-01-03T00:00:01.000Z',
  ...overrides,
});

const ONE = '/factories/fac_1/webhooks/wh_abc';
const REF = { caller: CALLER, factory_id: 'fac_1', webhook_uid: 'wh_abc' };

describe('webhook routes', () => {
  const { call, send, onlyCall, itMapsOrchestratorErrors } = routeHarness(webhookEndpoints);

  it('creates a webhook with one CreateWebhook call and answers 201 with the secret shown this once', async () => {
    call.mockResolvedValue({
      webhook: webhook({ auth_mode: 'token', signature_scheme: '' }),
      secret: 's3cret',
      ingress_url: 'https://hooks.test/wh_abc',
    });
    const res = await send('POST', '/factories/fac_1/webhooks', { name: ' github ', auth_mode: 'token' });
    expect(res.status).toBe(201);
    expect(await res.json()).toMatchObject({
      webhook_uid: 'wh_abc',
      auth_mode: 'token',
      signature_scheme: null,
      delivery_id_header: null,
      secret: 's3cret',
      ingress_url: 'https://hooks.test/wh_abc',
    });
    expect(onlyCall()).toEqual([
      'factories',
      'CreateWebhook',
      {
        caller: CALLER,
        factory_id: 'fac_1',
        name: 'github',
        auth_mode: 'token',
        signature_scheme: '',
        provider_secret: '',
        secret_name: '',
        delivery_id_header: '',
      },
    ]);
  });

  it.each([
    ['an unknown auth mode', 'auth_mode', { name: 'a', auth_mode: 'basic' }],
    ['a blank name', 'name', { name: ' ' }],
  ])('refuses a create body with %s without calling the orchestrator', async (_what, path, body) => {
    expect(await refusedPaths(await send('POST', '/factories/fac_1/webhooks', body))).toEqual([path]);
    expect(call).not.toHaveBeenCalled();
  });

  it('lists and reads webhooks, with empty optional strings as null', async () => {
    call.mockResolvedValueOnce({ webhooks: [webhook()] });
    const list = (await (await send('GET', '/factories/fac_1/webhooks')).json()) as { webhooks: unknown[] };
    expect(list.webhooks).toEqual([{ ...webhook(), delivery_id_header: null }]);
    expect(onlyCall()).toEqual(['factories', 'ListWebhooks', { caller: CALLER, factory_id: 'fac_1' }]);

    call.mockReset();
    call.mockResolvedValueOnce(webhook());
    expect(await (await send('GET', ONE)).json()).toMatchObject({ webhook_uid: 'wh_abc' });
    expect(onlyCall()).toEqual(['factories', 'GetWebhook', REF]);
  });

  it.each([
    ['PATCH', ONE, { enabled: false }, false],
    ['POST', `${ONE}/enable`, undefined, true],
    ['POST', `${ONE}/disable`, undefined, false],
  ] as const)('%s %s is one SetWebhookEnabled call', async (verb, path, body, enabled) => {
    call.mockResolvedValue(webhook({ enabled }));
    const res = await send(verb, path, body);
    expect(await res.json()).toMatchObject({ webhook_uid: 'wh_abc', enabled });
    expect(onlyCall()).toEqual(['factories', 'SetWebhookEnabled', { ...REF, enabled }]);
  });

  it('refuses a create body with a field it does not take, naming it, without calling the orchestrator', async () => {
    expect(
      await problemOf(await send('POST', '/factories/fac_1/webhooks', { name: 'a', secret: 'mine' }), 400),
    ).toMatchObject({
      detail: expect.stringContaining("'secret'"),
    });
    expect(call).not.toHaveBeenCalled();
  });

  it('refuses a PATCH changing more than enabled, naming the field, without calling the orchestrator', async () => {
    expect(await problemOf(await send('PATCH', ONE, { enabled: true, name: 'renamed' }), 400)).toMatchObject({
      detail: expect.stringContaining("'name'"),
    });
    expect(call).not.toHaveBeenCalled();
  });

  it('deletes with 204 and rotates the secret, passing a provider secret when given', async () => {
    call.mockResolvedValueOnce({});
    expect((await send('DELETE', ONE)).status).toBe(204);
    expect(onlyCall()).toEqual(['factories', 'DeleteWebhook', REF]);

    call.mockReset();
    call.mockResolvedValueOnce({ webhook: webhook(), secret: '', ingress_url: 'https://hooks.test/wh_abc' });
    const rotated = await send('POST', `${ONE}/rotate-secret`, { provider_secret: 'from-github' });
    const body = (await rotated.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ webhook_uid: 'wh_abc', ingress_url: 'https://hooks.test/wh_abc' });
    expect(body).not.toHaveProperty('secret');
    expect(onlyCall()).toEqual([
      'factories',
      'RotateWebhookSecret',
      { ...REF, provider_secret: 'from-github' },
    ]);
  });

  it('pages through the delivery log: limit and cursor typed, next_cursor only while there is more', async () => {
    call.mockResolvedValueOnce({ deliveries: [delivery()], next_cursor: 'c-2' });
    const page = (await (await send('GET', `${ONE}/deliveries?limit=1&cursor=c-1`)).json()) as Record<
      string,
      unknown
    >;
    const { payload: _payload, outcome_json: _outcome, ...listed } = delivery();
    expect(page).toEqual({ deliveries: [{ ...listed, reason: null }], next_cursor: 'c-2' });
    expect(onlyCall()).toEqual(['factories', 'ListDeliveries', { ...REF, limit: 1, cursor: 'c-1' }]);

    call.mockReset();
    call.mockResolvedValueOnce({ deliveries: [], next_cursor: '' });
    expect(await (await send('GET', `${ONE}/deliveries`)).json()).toEqual({ deliveries: [] });
    expect(onlyCall()[2]).toEqual({ ...REF, limit: 0, cursor: '' });
  });

  it.each([
    ['limit=0', 'limit'],
    ['limit=201', 'limit'],
    ['limit=many', 'limit'],
  ])('refuses the delivery log query %s with a 400 naming %s', async (query, path) => {
    expect(await refusedPaths(await send('GET', `${ONE}/deliveries?${query}`))).toEqual([path]);
    expect(call).not.toHaveBeenCalled();
  });

  it('reads one delivery expanded with its payload and outcome', async () => {
    const outcome = [{ automation_id: 'aut_1', automation_name: 'triage', matched: true, run_id: 'run-1' }];
    call.mockResolvedValue(
      delivery({ payload: Buffer.from('{"action":"opened"}'), outcome_json: JSON.stringify(outcome) }),
    );
    expect(await (await send('GET', `${ONE}/deliveries/d-1`)).json()).toMatchObject({
      id: 'd-1',
      payload: { action: 'opened' },
      outcome,
    });
    expect(onlyCall()).toEqual(['factories', 'GetDelivery', { ...REF, delivery_id: 'd-1' }]);
  });

  it('tests a filter against a stored delivery and answers the verdict with both checks', async () => {
    call.mockResolvedValue({
      would_trigger: false,
      webhook_check_passed: true,
      webhook_check_detail: 'selected',
      payload_check_passed: false,
      payload_mismatches: ['payload.action: "closed" is not an allowed value'],
      payload_check_error: '',
      payload_check_detail: '1 mismatch',
    });
    const res = await send('POST', `${ONE}/test-filter`, {
      delivery_id: 'd-1',
      filter: { action: ['opened'] },
    });
    expect(await res.json()).toEqual({
      result: 'Would not trigger',
      would_trigger: false,
      webhook_check: { passed: true, detail: 'selected' },
      payload_check: {
        passed: false,
        detail: '1 mismatch',
        mismatches: ['payload.action: "closed" is not an allowed value'],
      },
    });
    expect(onlyCall()).toEqual([
      'factories',
      'TestFilter',
      {
        ...REF,
        delivery_id: 'd-1',
        sample_payload_json: '',
        automation_id: '',
        filter_json: '{"action":["opened"]}',
      },
    ]);
  });

  it('tests a filter against a sample body given inline instead of a stored delivery', async () => {
    call.mockResolvedValue({
      would_trigger: true,
      webhook_check_passed: true,
      webhook_check_detail: 'selected',
      payload_check_passed: true,
      payload_mismatches: [],
      payload_check_error: '',
      payload_check_detail: 'matches',
    });
    const res = await send('POST', `${ONE}/test-filter`, {
      sample_payload: { action: 'opened' },
      filter: {},
    });
    expect(await res.json()).toMatchObject({ result: 'Would trigger', would_trigger: true });
    expect(onlyCall()).toEqual([
      'factories',
      'TestFilter',
      {
        ...REF,
        delivery_id: '',
        sample_payload_json: '{"action":"opened"}',
        automation_id: '',
        filter_json: '{}',
      },
    ]);
  });

  it.each([
    ['neither', {}],
    ['both', { delivery_id: 'd-1', sample_payload: {} }],
  ])('refuses a filter test naming %s of a delivery and a sample', async (_, body) => {
    expect(await refusedPaths(await send('POST', `${ONE}/test-filter`, body))).toEqual(['delivery_id']);
    expect(call).not.toHaveBeenCalled();
  });

  it('refuses a filter test naming both an automation and a filter', async () => {
    const body = { delivery_id: 'd-1', automation_id: 'aut_1', filter: { action: ['opened'] } };
    expect(await refusedPaths(await send('POST', `${ONE}/test-filter`, body))).toEqual(['filter']);
    expect(call).not.toHaveBeenCalled();
  });

  itMapsOrchestratorErrors([
    ['resource_not_found', 404, 'GET', ONE],
    ['conflict', 409, 'POST', '/factories/fac_1/webhooks', { name: 'github' }],
    [
      'invalid_request',
      400,
      'POST',
      `${ONE}/test-filter`,
      { delivery_id: 'd-1', filter: { action: { eq: 1 } } },
    ],
    ['not_authorized', 403, 'POST', `${ONE}/rotate-secret`, {}],
  ]);
});
