import type { Automation__Output } from '@conveyor/proto';
import { CALLER, problemOf, refusedPaths, routeHarness } from '../test-support/route-harness';
import { webhookAutomationEndpoints } from './webhook-automation-routes';

const TRIGGER = {
  provider: 'webhook',
  event: 'received',
  filter: { webhook_ids: ['wh_abc'], payload: { action: ['opened'] } },
};
const automation = (overrides: Partial<Automation__Output> = {}): Automation__Output => ({
  automation_id: 'aut_1',
  factory_id: 'fac_1',
  name: 'triage',
  prompt: 'Triage the issue.',
  agent_config_json: '',
  enabled: true,
  trigger_json: JSON.stringify(TRIGGER),
  managed_by: 'api',
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-02T00:00:00.000Z',
  ...overrides,
});
const AUTOMATION_JSON = {
  automation_id: 'aut_1',
  factory_id: 'fac_1',
  name: 'triage',
  prompt: 'Triage the issue.',
  agent_config: {},
  enabled: true,
  trigger: TRIGGER,
  managed_by: 'api',
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-02T00:00:00.000Z',
};

const BASE = '/factories/fac_1/automations';
const ONE = `${BASE}/aut_1`;
const REF = { caller: CALLER, factory_id: 'fac_1', automation_id: 'aut_1' };

describe('automation routes', () => {
  const { call, send, onlyCall, itMapsOrchestratorErrors } = routeHarness(webhookAutomationEndpoints);

  it('creates an automation with one CreateAutomation call (config and trigger as JSON) and answers 201', async () => {
    call.mockResolvedValue(automation({ agent_config_json: '{"model_id":"m"}' }));
    const res = await send('POST', BASE, {
      name: ' triage ',
      prompt: 'Triage the issue.',
      agent_config: { model_id: 'm' },
      enabled: false,
      trigger: TRIGGER,
    });
    expect(res.status).toBe(201);
    expect(await res.json()).toEqual({ ...AUTOMATION_JSON, agent_config: { model_id: 'm' } });
    expect(onlyCall()).toEqual([
      'factories',
      'CreateAutomation',
      {
        caller: CALLER,
        factory_id: 'fac_1',
        name: 'triage',
        prompt: 'Triage the issue.',
        agent_config_json: '{"model_id":"m"}',
        enabled: false,
        trigger_json: JSON.stringify(TRIGGER),
      },
    ]);
  });

  it('leaves enabled and the agent config to the orchestrator when the create body omits them', async () => {
    call.mockResolvedValue(automation());
    await send('POST', BASE, { name: 'triage', prompt: 'p', trigger: TRIGGER });
    const request = onlyCall()[2];
    expect(request).toMatchObject({ agent_config_json: '' });
    expect(request).not.toHaveProperty('enabled');
  });

  it.each([
    ['no trigger', 'trigger', { name: 'a', prompt: 'p' }],
    ['a trigger that is not an object', 'trigger', { name: 'a', prompt: 'p', trigger: 'on push' }],
    ['an empty prompt', 'prompt', { name: 'a', prompt: '', trigger: TRIGGER }],
  ])('refuses a create body with %s without calling the orchestrator', async (_what, path, body) => {
    expect(await refusedPaths(await send('POST', BASE, body))).toEqual([path]);
    expect(call).not.toHaveBeenCalled();
  });

  it('lists and reads automations, each with one call', async () => {
    call.mockResolvedValueOnce({ automations: [automation()] });
    expect(await (await send('GET', BASE)).json()).toEqual({ automations: [AUTOMATION_JSON] });
    expect(onlyCall()).toEqual(['factories', 'ListAutomations', { caller: CALLER, factory_id: 'fac_1' }]);

    call.mockReset();
    call.mockResolvedValueOnce(automation());
    expect(await (await send('GET', ONE)).json()).toEqual(AUTOMATION_JSON);
    expect(onlyCall()).toEqual(['factories', 'GetAutomation', REF]);
  });

  it('updates only the fields a PATCH gives; a null agent config clears it', async () => {
    call.mockResolvedValue(automation({ prompt: 'New prompt.' }));
    const res = await send('PATCH', ONE, { prompt: 'New prompt.', agent_config: null });
    expect(await res.json()).toMatchObject({ prompt: 'New prompt.' });
    expect(onlyCall()).toEqual([
      'factories',
      'UpdateAutomation',
      { ...REF, prompt: 'New prompt.', agent_config_json: '{}' },
    ]);
  });

  it('passes a new trigger and config of a PATCH as JSON', async () => {
    call.mockResolvedValue(automation());
    await send('PATCH', ONE, {
      name: 'renamed',
      trigger: TRIGGER,
      agent_config: { model_id: 'm' },
      enabled: true,
    });
    expect(onlyCall()[2]).toEqual({
      ...REF,
      name: 'renamed',
      trigger_json: JSON.stringify(TRIGGER),
      agent_config_json: '{"model_id":"m"}',
      enabled: true,
    });
  });

  it.each([
    ['enable', true],
    ['disable', false],
  ] as const)('%s is one UpdateAutomation call setting enabled only', async (action, enabled) => {
    call.mockResolvedValue(automation({ enabled }));
    expect(await (await send('POST', `${ONE}/${action}`)).json()).toMatchObject({ enabled });
    expect(onlyCall()).toEqual(['factories', 'UpdateAutomation', { ...REF, enabled }]);
  });

  it('deletes with 204', async () => {
    call.mockResolvedValue({});
    expect((await send('DELETE', ONE)).status).toBe(204);
    expect(onlyCall()).toEqual(['factories', 'DeleteAutomation', REF]);
  });

  it('refuses a create body with a field it does not take, naming it, without calling the orchestrator', async () => {
    expect(
      await problemOf(
        await send('POST', BASE, { name: 'a', prompt: 'p', trigger: TRIGGER, schedule: '0 * * * *' }),
        400,
      ),
    ).toMatchObject({
      detail: expect.stringContaining("'schedule'"),
    });
    expect(call).not.toHaveBeenCalled();
  });

  it('refuses a PATCH with a field it does not take, naming it, without calling the orchestrator', async () => {
    expect(await problemOf(await send('PATCH', ONE, { webhook_ids: ['wh_abc'] }), 400)).toMatchObject({
      detail: expect.stringContaining("'webhook_ids'"),
    });
    expect(call).not.toHaveBeenCalled();
  });

  itMapsOrchestratorErrors([
    ['invalid_request', 400, 'POST', BASE, { name: 'a', prompt: 'p', trigger: { provider: 'slack' } }],
    ['conflict', 409, 'PATCH', ONE, { name: 'taken' }],
    ['resource_not_found', 404, 'POST', `${ONE}/enable`],
    ['not_authorized', 403, 'DELETE', ONE],
  ]);
});
