import OzAPI from 'oz-agent-sdk';
import { startPlatform, type RunningPlatform } from './platform';
import { apiCall, waitForRunState } from './run-waits';

describe('runs end to end: create, execute, inspect, cancel, follow up', () => {
  let platform: RunningPlatform;
  let client: OzAPI;

  beforeAll(async () => {
    platform = await startPlatform();
    client = new OzAPI({ apiKey: platform.apiKey, baseURL: platform.apiUrl, maxRetries: 0 });
  });

  afterAll(async () => {
    await platform?.stop();
  });

  const api = (method: string, path: string, body?: unknown) => apiCall(platform, method, path, body);
  const waitForState = (runId: string, states: string[], timeoutMs?: number) =>
    waitForRunState(platform, runId, states, timeoutMs);

  it('runs a prompt to SUCCEEDED through the official SDK', async () => {
    const png = Buffer.from('89504e470d0a1a0a', 'hex').toString('base64');
    const created = await client.agent.run({
      prompt:
        'Say hello\n@demo message Hello from the demo harness\n@demo tool bash {"cmd":"ls"} => {"stdout":"README.md"}',
      title: 'hello run',
      images: [{ data: png, mime_type: 'image/png' }],
    });
    expect(created.run_id).toBeTruthy();
    expect(created.task_id).toBe(created.run_id);
    expect(created.state).toBe('QUEUED');
    const done = await waitForState(created.run_id, ['SUCCEEDED', 'FAILED', 'ERROR']);
    expect(done.state).toBe('SUCCEEDED');
    const run = await client.agent.runs.retrieve(created.run_id);
    expect(run).toMatchObject({
      run_id: created.run_id,
      title: 'hello run',
      state: 'SUCCEEDED',
      source: 'API',
    });
    expect(run.prompt).toContain('Say hello');
    expect(run.started_at).toBeTruthy();
    expect(run.creator?.uid).toBe('user_dev');
    expect((run as unknown as { executor?: { uid: string } }).executor?.uid).toBe('user_dev');
  });

  it('creates through POST /agent/run as well and rejects invalid bodies with 400', async () => {
    const ok = await api('POST', '/agent/run', { prompt: 'second path', metadata: { ticket: 'T-1' } });
    expect(ok.status).toBe(200);
    expect(ok.body.state).toBe('QUEUED');
    expect((await api('GET', `/agent/runs/${ok.body.run_id as string}`)).body.metadata).toEqual({
      ticket: 'T-1',
    });
    for (const body of [
      {},
      { prompt: '   ' },
      { prompt: 'x', metadata: { 'bad key!': 'v' } },
      { prompt: 'x', metadata: { k: 'v'.repeat(257) } },
      { prompt: 'x', mode: 'turbo' },
      { prompt: 'x', attachments: [{ data: 'aGk=', file_name: 'a.txt', mime_type: 'text/plain' }] },
      { prompt: 'x', config: { skill_spec: 'a/b:c', skills: ['a/b:c'] } },
    ]) {
      const res = await api('POST', '/agent/runs', body);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ status: 400, type: expect.stringMatching(/invalid_request$/) });
    }
    const tooMany = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, 'v']));
    expect((await api('POST', '/agent/runs', { prompt: 'x', metadata: tooMany })).status).toBe(400);
    expect(
      (
        await api('POST', '/agent/runs', {
          prompt: 'x',
          parent_run_id: '00000000-0000-4000-8000-000000000000',
        })
      ).status,
    ).toBe(400);
  });

  it('ends FAILED with the harness message, and BLOCKED when the agent needs input', async () => {
    const failed = await api('POST', '/agent/runs', { prompt: '@demo fail the tests do not pass' });
    const run = await waitForState(failed.body.run_id as string, ['FAILED']);
    expect(run.status_message).toMatchObject({ message: 'the tests do not pass', retryable: false });
    const blocked = await api('POST', '/agent/runs', { prompt: '@demo block need approval' });
    expect((await waitForState(blocked.body.run_id as string, ['BLOCKED'])).status_message).toMatchObject({
      message: 'need approval',
    });
  });

  it('cancels a running run within seconds, and rejects cancelling it again', async () => {
    const created = await api('POST', '/agent/runs', { prompt: '@demo sleep 60000' });
    const runId = created.body.run_id as string;
    await waitForState(runId, ['INPROGRESS']);
    const started = Date.now();
    expect(await client.agent.runs.cancel(runId)).toBe(runId);
    const cancelled = await waitForState(runId, ['CANCELLED'], 5000);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(cancelled.state).toBe('CANCELLED');
    const again = await api('POST', `/agent/runs/${runId}/cancel`);
    expect(again.status).toBe(400);
    expect(again.body.type).toMatch(/invalid_request$/);
    // The runner stopped the harness: the run stays CANCELLED.
    await new Promise((r) => setTimeout(r, 1500));
    expect((await api('GET', `/agent/runs/${runId}`)).body.state).toBe('CANCELLED');
  });

  it('routes follow-ups: to the live harness while running, to a new execution after the end', async () => {
    const created = await api('POST', '/agent/runs', { prompt: '@demo await-followup 20000' });
    const runId = created.body.run_id as string;
    await waitForState(runId, ['INPROGRESS']);
    const live = await api('POST', `/agent/runs/${runId}/followups`, {
      message: '@demo message continuing as asked',
    });
    expect(live.status).toBe(200);
    expect(live.body.routed_to).toBe('live_harness');
    await waitForState(runId, ['SUCCEEDED']);

    const next = await api('POST', `/agent/runs/${runId}/followups`, {
      message: 'one more thing\n@demo message second execution',
    });
    expect(next.body.routed_to).toBe('new_execution');
    const rerun = await waitForState(runId, ['SUCCEEDED'], 30_000);
    expect(rerun.state).toBe('SUCCEEDED');
    const empty = await api('POST', `/agent/runs/${runId}/followups`, {});
    expect(empty.status).toBe(400);
  });

  it('exposes run queue depth on the orchestrator and job durations on the runner', async () => {
    const orchestratorMetrics = await (await fetch(`${platform.orchestratorHttpUrl}/metrics`)).text();
    expect(orchestratorMetrics).toMatch(/conveyor_run_queue_depth\{[^}]*state="waiting"/);
    const runnerMetrics = await (await fetch(`${platform.runnerHttpUrl}/metrics`)).text();
    expect(runnerMetrics).toMatch(
      /conveyor_run_job_duration_seconds_count\{[^}]*outcome="succeeded"[^}]*\} [1-9]/,
    );
  });

  it('hides runs of other teams and unknown IDs behind the same 404', async () => {
    for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
      const res = await api('GET', `/agent/runs/${id}`);
      expect(res.status).toBe(404);
      expect(res.body.type).toMatch(/resource_not_found$/);
      expect((await api('POST', `/agent/runs/${id}/cancel`)).status).toBe(404);
      expect((await api('POST', `/agent/runs/${id}/followups`, { message: 'x' })).status).toBe(404);
    }
  });
});
