import OzAPI, { NotFoundError } from 'oz-agent-sdk';
import { otherTeamAdmin } from '@conveyor/testing';
import { startPlatform, type RunningPlatform } from './platform';
import { apiCall, type Json } from './run-waits';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Scheduled agents through the gateway: the official SDK's schedule methods unchanged, and every validation error. */
describe('scheduled agents end to end', () => {
  let platform: RunningPlatform;
  let client: OzAPI;
  let otherKey: string;

  beforeAll(async () => {
    platform = await startPlatform();
    client = new OzAPI({ apiKey: platform.apiKey, baseURL: platform.apiUrl, maxRetries: 0 });
    otherKey = (await otherTeamAdmin(platform)).key;
  });

  afterAll(async () => {
    await platform?.stop();
  });

  const api = (method: string, path: string, body?: unknown, key?: string) =>
    apiCall(platform, method, path, body, key);

  it('creates, runs, lists, retrieves, updates, pauses, resumes and deletes through the official SDK', async () => {
    const created = await client.agent.schedules.create({
      name: 'b every second',
      cron_schedule: '* * * * * *',
      prompt: 'Scheduled hello\n@demo message hello from a schedule',
      agent_config: { name: 'scheduled-hello' },
    });
    expect(created).toMatchObject({
      name: 'b every second',
      cron_schedule: '* * * * * *',
      enabled: true,
      scope: { type: 'Team', uid: 'team_dev' },
    });
    expect(created.id).toBeTruthy();
    expect(created.created_by?.uid).toBe('user_dev');
    expect(Date.parse(created.history?.next_run ?? '')).toBeGreaterThan(Date.now() - 1000);
    await client.agent.schedules.create({
      name: 'a nightly',
      cron_schedule: '0 3 * * *',
      prompt: 'nightly',
      enabled: false,
    });

    // Runs started by the schedule carry it, with source SCHEDULED_AGENT, and come back under schedule_id.
    let runs: Array<{
      run_id: string;
      source?: string;
      schedule?: { schedule_id: string; schedule_name: string; cron_schedule: string };
      state: string;
    }> = [];
    const deadline = Date.now() + 20_000;
    while (runs.length < 2 && Date.now() < deadline) {
      runs = (await client.agent.runs.list({ schedule_id: created.id })).runs as typeof runs;
      await sleep(250);
    }
    expect(runs.length).toBeGreaterThanOrEqual(2);
    for (const run of runs) {
      expect(run.source).toBe('SCHEDULED_AGENT');
      expect(run.schedule).toEqual({
        schedule_id: created.id,
        schedule_name: 'b every second',
        cron_schedule: '* * * * * *',
      });
    }
    const sample = await client.agent.runs.retrieve(runs[0]!.run_id);
    expect(sample.agent_config?.name).toBe('scheduled-hello');

    const paused = await client.agent.schedules.pause(created.id);
    expect(paused.enabled).toBe(false);
    expect(paused.history?.next_run ?? null).toBeNull();

    const retrieved = await client.agent.schedules.retrieve(created.id);
    expect(retrieved.history?.last_ran).toBeTruthy();
    const recent =
      (retrieved.history as { recent_runs?: Array<{ run_id: string; state: string }> }).recent_runs ?? [];
    expect(recent.length).toBeGreaterThanOrEqual(2);
    expect(recent.map((r) => r.run_id)).toEqual(expect.arrayContaining(runs.map((r) => r.run_id)));
    for (const r of recent)
      expect(['QUEUED', 'PENDING', 'CLAIMED', 'INPROGRESS', 'SUCCEEDED']).toContain(r.state);

    const list = await client.agent.schedules.list();
    expect(list.schedules.map((s) => s.name)).toEqual(['a nightly', 'b every second']);

    const updated = await client.agent.schedules.update(created.id, {
      name: 'b daily',
      cron_schedule: '0 9 * * *',
      enabled: true,
      prompt: 'daily',
    });
    expect(updated).toMatchObject({
      name: 'b daily',
      cron_schedule: '0 9 * * *',
      enabled: true,
      prompt: 'daily',
    });
    expect(updated.agent_config).toEqual({ name: 'scheduled-hello' });
    expect(updated.history?.next_run).toMatch(/T09:00:00\.000Z$/);

    await client.agent.schedules.pause(created.id);
    const resumed = await client.agent.schedules.resume(created.id);
    expect(resumed.enabled).toBe(true);
    expect(resumed.history?.next_run).toMatch(/T09:00:00\.000Z$/);

    expect(await client.agent.schedules.delete(created.id)).toEqual({ success: true });
    await expect(client.agent.schedules.retrieve(created.id)).rejects.toBeInstanceOf(NotFoundError);
    // The runs it started stay listed under its ID.
    expect((await client.agent.runs.list({ schedule_id: created.id })).runs.length).toBeGreaterThanOrEqual(
      runs.length,
    );
  });

  it('answers every invalid request with 400 invalid_request naming the field', async () => {
    const valid = { name: 'v', cron_schedule: '0 9 * * *', prompt: 'p' };
    const expectInvalid = async (method: string, path: string, body: unknown, field: string) => {
      const res = await api(method, path, body);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ status: 400, type: expect.stringMatching(/invalid_request$/) });
      expect(String(res.body.detail)).toMatch(new RegExp(`^${field}(: |\\.)`));
      return res.body;
    };
    await expectInvalid('POST', '/agent/schedules', { cron_schedule: '0 9 * * *', prompt: 'p' }, 'name');
    await expectInvalid('POST', '/agent/schedules', { name: 'x', prompt: 'p' }, 'cron_schedule');
    await expectInvalid('POST', '/agent/schedules', { name: 'x', cron_schedule: '0 9 * * *' }, 'prompt');
    const badCron = await expectInvalid(
      'POST',
      '/agent/schedules',
      { ...valid, cron_schedule: '0 25 * * *' },
      'cron_schedule',
    );
    expect(badCron.detail).toContain('expected range 0-23');
    await expectInvalid(
      'POST',
      '/agent/schedules',
      { ...valid, cron_schedule: 'tomorrow at nine' },
      'cron_schedule',
    );
    await expectInvalid('POST', '/agent/schedules', { ...valid, timezone: 'Atlantis/Capital' }, 'timezone');
    await expectInvalid('POST', '/agent/schedules', { ...valid, enabled: 'yes' }, 'enabled');
    await expectInvalid('POST', '/agent/schedules', { ...valid, mode: 'turbo' }, 'mode');
    await expectInvalid('POST', '/agent/schedules', { ...valid, metadata: { 'bad key!': 'v' } }, 'metadata');
    await expectInvalid(
      'POST',
      '/agent/schedules',
      { ...valid, agent_config: { skill_spec: 'a/b:c', skills: ['a/b:c'] } },
      'agent_config',
    );
    expect((await api('POST', '/agent/schedules', { ...valid, agent_uid: 'agent_missing' })).status).toBe(
      404,
    );

    // A skill stands in for the prompt; a time zone is honoured.
    const skill = await api('POST', '/agent/schedules', {
      name: 'skill',
      cron_schedule: '0 9 * * *',
      timezone: 'America/New_York',
      agent_config: { skill_spec: 'acme/api:deploy/SKILL.md' },
      enabled: false,
    });
    expect(skill.status).toBe(200);
    expect(skill.body).toMatchObject({
      timezone: 'America/New_York',
      enabled: false,
      history: { next_run: null },
    });
    const id = skill.body.id as string;

    // PUT: every field except agent_config is required.
    const full = { name: 'n', cron_schedule: '0 9 * * *', enabled: true, prompt: 'p' };
    for (const field of ['name', 'cron_schedule', 'enabled', 'prompt']) {
      const { [field]: _omitted, ...rest } = full as Json;
      await expectInvalid('PUT', `/agent/schedules/${id}`, rest, field);
    }
    await expectInvalid(
      'PUT',
      `/agent/schedules/${id}`,
      { ...full, cron_schedule: '* * *' },
      'cron_schedule',
    );
    const put = await api('PUT', `/agent/schedules/${id}`, { ...full, timezone: 'Asia/Tokyo' });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({
      name: 'n',
      timezone: 'Asia/Tokyo',
      agent_config: { skill_spec: 'acme/api:deploy/SKILL.md' },
    });
    // 09:00 in Tokyo is 00:00 UTC.
    expect(put.body.history).toMatchObject({ next_run: expect.stringMatching(/T00:00:00\.000Z$/) });
  });

  it('hides schedules of other teams and unknown IDs behind the same 404', async () => {
    const mine = await client.agent.schedules.create({
      name: 'private',
      cron_schedule: '0 9 * * *',
      prompt: 'p',
      enabled: false,
    });
    expect((await api('GET', '/agent/schedules', undefined, otherKey)).body).toEqual({ schedules: [] });
    for (const id of [mine.id, 'sched_doesnotexist']) {
      for (const [method, path, body] of [
        ['GET', `/agent/schedules/${id}`],
        [
          'PUT',
          `/agent/schedules/${id}`,
          { name: 'x', cron_schedule: '0 9 * * *', enabled: true, prompt: 'x' },
        ],
        ['DELETE', `/agent/schedules/${id}`],
        ['POST', `/agent/schedules/${id}/pause`],
        ['POST', `/agent/schedules/${id}/resume`],
      ] as Array<[string, string, unknown?]>) {
        const res = await api(method, path, body, otherKey);
        expect(res.status).toBe(404);
        expect(res.body).toMatchObject({ status: 404, type: expect.stringMatching(/resource_not_found$/) });
      }
    }
    expect((await client.agent.schedules.retrieve(mine.id)).enabled).toBe(false);
  });
});
