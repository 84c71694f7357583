import { scheduleOutput } from '../test-support/orchestrator-answers';
import { CALLER, refusedPaths, routeHarness } from '../test-support/route-harness';
import { scheduleEndpoints } from './schedule-routes';

describe('schedule routes', () => {
  const { call, send, onlyCall, itMapsOrchestratorErrors } = routeHarness(scheduleEndpoints);

  const item = (res: Response) => res.json() as Promise<Record<string, unknown>>;

  it('maps a create body to one CreateSchedule call and answers the ScheduledAgentItem', async () => {
    call.mockResolvedValue(scheduleOutput());
    const res = await send('POST', '/agent/schedules', {
      name: ' nightly ',
      cron_schedule: '0 3 * * *',
      prompt: 'tidy up',
      agent_config: { model_id: 'm' },
      metadata: { k: 'v' },
    });
    expect(res.status).toBe(200);
    expect(await item(res)).toMatchObject({
      id: 'sched_1',
      cron_schedule: '0 3 * * *',
      agent_config: { name: 'n' },
      history: { last_ran: null, next_run: '2026-01-03T03:00:00.000Z' },
      scope: { type: 'Team', uid: 'team_1' },
    });
    const [service, method, request] = onlyCall();
    expect([service, method]).toEqual(['schedules', 'CreateSchedule']);
    expect(request).toEqual({
      caller: CALLER,
      name: 'nightly',
      cron_schedule: '0 3 * * *',
      timezone: '',
      prompt: 'tidy up',
      config_json: JSON.stringify({ model_id: 'm' }),
      agent_uid: '',
      metadata: { k: 'v' },
      mode: '',
    });
    // Not given: the orchestrator's default (enabled) applies.
    expect(request.enabled).toBeUndefined();
  });

  it.each([
    ['no prompt and no skill', 'prompt', { name: 'n', cron_schedule: '0 3 * * *' }],
    ['a blank cron expression', 'cron_schedule', { name: 'n', cron_schedule: '  ', prompt: 'p' }],
    ['an unknown mode', 'mode', { name: 'n', cron_schedule: '0 3 * * *', prompt: 'p', mode: 'fast' }],
  ])(
    'refuses a create body with %s (400 naming %s) without calling the orchestrator',
    async (_what, path, body) => {
      expect(await refusedPaths(await send('POST', '/agent/schedules', body))).toContain(path);
      expect(call).not.toHaveBeenCalled();
    },
  );

  it('creates a skill-only schedule without a prompt', async () => {
    call.mockResolvedValue(scheduleOutput());
    const res = await send('POST', '/agent/schedules', {
      name: 'n',
      cron_schedule: '0 3 * * *',
      enabled: false,
      agent_config: { skill_spec: 'acme/api:SKILL.md' },
    });
    expect(res.status).toBe(200);
    expect(onlyCall()[2]).toMatchObject({ prompt: '', enabled: false });
  });

  it('lists the schedules without their recent runs and retrieves one with them', async () => {
    call.mockResolvedValueOnce({ schedules: [scheduleOutput(), scheduleOutput({ id: 'sched_2' })] });
    const list = (await (await send('GET', '/agent/schedules')).json()) as {
      schedules: Array<{ id: string; history: object }>;
    };
    expect(list.schedules.map((s) => s.id)).toEqual(['sched_1', 'sched_2']);
    expect(list.schedules[0]!.history).not.toHaveProperty('recent_runs');
    expect(onlyCall()).toEqual(['schedules', 'ListSchedules', { caller: CALLER }]);

    call.mockReset();
    call.mockResolvedValueOnce(scheduleOutput());
    const one = await item(await send('GET', '/agent/schedules/sched_1'));
    expect(one.history).toMatchObject({ recent_runs: [{ run_id: 'r1', state: 'SUCCEEDED' }] });
    expect(onlyCall()).toEqual(['schedules', 'GetSchedule', { caller: CALLER, schedule_id: 'sched_1' }]);
  });

  it('maps an update: the required fields always, the optional ones only when present', async () => {
    call.mockResolvedValue(scheduleOutput());
    const res = await send('PUT', '/agent/schedules/sched_1', {
      name: 'nightly',
      cron_schedule: '0 4 * * *',
      enabled: true,
      prompt: 'p2',
    });
    expect(res.status).toBe(200);
    const [service, method, request] = onlyCall();
    expect([service, method]).toEqual(['schedules', 'UpdateSchedule']);
    expect(request).toEqual({
      caller: CALLER,
      schedule_id: 'sched_1',
      name: 'nightly',
      cron_schedule: '0 4 * * *',
      enabled: true,
      prompt: 'p2',
      metadata: {},
      has_metadata: false,
    });
    // Absent optional fields keep the stored value.
    for (const field of ['timezone', 'config_json', 'agent_uid', 'mode'])
      expect(request[field]).toBeUndefined();
  });

  it('replaces the optional fields an update gives, metadata included', async () => {
    call.mockResolvedValue(scheduleOutput());
    await send('PUT', '/agent/schedules/sched_1', {
      name: 'nightly',
      cron_schedule: '0 4 * * *',
      enabled: false,
      agent_config: { skills: ['acme/api:SKILL.md'] },
      timezone: 'Europe/Paris',
      agent_uid: '',
      metadata: {},
      mode: 'plan',
    });
    expect(onlyCall()[2]).toMatchObject({
      enabled: false,
      prompt: '',
      timezone: 'Europe/Paris',
      config_json: JSON.stringify({ skills: ['acme/api:SKILL.md'] }),
      agent_uid: '',
      metadata: {},
      has_metadata: true,
      mode: 'plan',
    });
  });

  it('refuses an update without enabled (the SDK always sends it) without calling the orchestrator', async () => {
    const res = await send('PUT', '/agent/schedules/sched_1', {
      name: 'n',
      cron_schedule: '0 3 * * *',
      prompt: 'p',
    });
    expect(await refusedPaths(res)).toEqual(['enabled']);
    expect(call).not.toHaveBeenCalled();
  });

  it('deletes, answering success', async () => {
    call.mockResolvedValue({});
    const res = await send('DELETE', '/agent/schedules/sched_1');
    expect(await res.json()).toEqual({ success: true });
    expect(onlyCall()).toEqual(['schedules', 'DeleteSchedule', { caller: CALLER, schedule_id: 'sched_1' }]);
  });

  it.each([
    ['pause', 'PauseSchedule', false],
    ['resume', 'ResumeSchedule', true],
  ] as const)('%ss without a body and answers the schedule', async (action, method, enabled) => {
    call.mockResolvedValue(scheduleOutput({ enabled }));
    const res = await send('POST', `/agent/schedules/sched_1/${action}`);
    expect(await item(res)).toMatchObject({ id: 'sched_1', enabled });
    expect(onlyCall()).toEqual(['schedules', method, { caller: CALLER, schedule_id: 'sched_1' }]);
  });

  itMapsOrchestratorErrors([
    ['resource_not_found', 404, 'GET', '/agent/schedules/missing'],
    [
      'invalid_request',
      400,
      'POST',
      '/agent/schedules',
      { name: 'n', cron_schedule: '61 * * * *', prompt: 'p' },
    ],
    ['not_authorized', 403, 'POST', '/agent/schedules/sched_1/pause'],
    ['internal_error', 500, 'DELETE', '/agent/schedules/sched_1'],
  ]);
});
