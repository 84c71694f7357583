import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { otherTeamAdmin } from '@conveyor/testing';
import { startPlatform, type RunningPlatform } from './platform';
import { waitForRunState } from './run-waits';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const AGENT = path.resolve(__dirname, '../fixtures/api-calling-agent.js');
const SNAPSHOT = Buffer.from('snapshot of the workspace\n');

/** The three SDK endpoints that were missing, the create fields that were dropped, and the optional RunItem fields. */
describe('API surface end to end', () => {
  let platform: RunningPlatform;
  let otherKey: string;

  beforeAll(async () => {
    platform = await startPlatform({
      env: { HARNESS_COMMANDS: JSON.stringify({ claude: `${process.execPath} ${AGENT}` }) },
    });
    otherKey = (await otherTeamAdmin(platform)).key;
  }, 120_000);

  afterAll(async () => {
    await platform?.stop();
  });

  const api = async (
    method: string,
    urlPath: string,
    options: { key?: string | null; body?: unknown } = {},
  ) => {
    const key = options.key === undefined ? platform.apiKey : options.key;
    const res = await fetch(urlPath.startsWith('http') ? urlPath : `${platform.apiUrl}${urlPath}`, {
      method,
      headers: {
        ...(key ? { Authorization: `Bearer ${key}` } : {}),
        ...(options.body === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : {}) as Json, bytes: Buffer.from(text) };
  };

  /** Starts a run of the API-calling agent; resolves once its harness wrote what it saw. */
  async function startAgent(
    task: { calls: unknown[]; events?: unknown[]; holdMs?: number },
    config: Json = {},
  ) {
    const out = path.join(os.tmpdir(), `agent-${randomUUID()}.json`);
    const created = await api('POST', '/agent/runs', {
      body: { prompt: JSON.stringify({ out, ...task }), config: { harness: { type: 'claude' }, ...config } },
    });
    expect(created.status).toBe(200);
    return { runId: created.body.run_id as string, out };
  }
  const results = (out: string) =>
    JSON.parse(readFileSync(out, 'utf8')) as { results: Array<{ status: number; body: Json }> };

  describe('handoff attachments, request_usage, run_time and session_link', () => {
    let runId: string;
    let upload: { status: number; body: Json };

    beforeAll(async () => {
      const started = await startAgent({
        calls: [
          {
            method: 'POST',
            path: '/harness-support/handoff-attachments',
            body: {
              filename: 'state/snapshot.txt',
              mime_type: 'text/plain',
              content_base64: SNAPSHOT.toString('base64'),
            },
          },
        ],
        events: [
          { kind: 'usage', input_tokens: 1200, output_tokens: 300, cost_usd: 0.25 },
          { kind: 'usage', input_tokens: 800, output_tokens: 200 },
        ],
      });
      runId = started.runId;
      await waitForRunState(platform, runId, ['SUCCEEDED']);
      upload = results(started.out).results[0]!;
    });

    it('the harness stores a snapshot file with its run-scoped key; the API lists it with a signed link', async () => {
      expect(upload).toMatchObject({
        status: 201,
        body: {
          filename: 'snapshot.txt',
          mime_type: 'text/plain',
          execution: 1,
          size_bytes: SNAPSHOT.length,
        },
      });
      const listed = await api('GET', `/agent/runs/${runId}/handoff/attachments`);
      expect(listed.status).toBe(200);
      expect(listed.body.attachments).toEqual([
        {
          attachment_id: upload.body.attachment_id,
          filename: 'snapshot.txt',
          mime_type: 'text/plain',
          download_url: expect.stringContaining('/blobs/'),
        },
      ]);
      const download = await fetch(listed.body.attachments[0].download_url as string);
      expect(download.status).toBe(200);
      expect(Buffer.from(await download.arrayBuffer())).toEqual(SNAPSHOT);
    });

    it('is empty while no execution has ended, 404 for another team, and user keys cannot upload', async () => {
      const queued = await api('POST', '/agent/runs', {
        body: { prompt: 'wait', config: { worker_host: 'nowhere' } },
      });
      expect((await api('GET', `/agent/runs/${queued.body.run_id}/handoff/attachments`)).body).toEqual({
        attachments: [],
      });
      const foreign = await api('GET', `/agent/runs/${runId}/handoff/attachments`, { key: otherKey });
      expect(foreign).toMatchObject({ status: 404, body: { status: 404 } });
      const byUser = await api('POST', '/harness-support/handoff-attachments', {
        body: { filename: 'x', content_base64: 'eA==' },
      });
      expect(byUser.status).toBe(403);
    });

    it('RunItem carries request_usage summed from usage events, run_time and the console session_link', async () => {
      const run = (await api('GET', `/agent/runs/${runId}`)).body;
      expect(run.request_usage).toEqual({
        total_tokens: 2500,
        inference_cost_usd: 0.25,
        usage_by_category: { input_tokens: 2000, output_tokens: 500 },
      });
      expect(run.run_time).toMatch(/^PT(\d+H)?(\d+M)?\d+(\.\d+)?S$/);
      expect(run.session_link).toBe(`${new URL(platform.apiUrl).origin}/console/runs/${runId}`);
      const listed = (await api('GET', `/agent/runs?limit=100`)).body.runs as Json[];
      expect(listed.find((r) => r.run_id === runId)?.request_usage).toEqual(run.request_usage);
    });
  });

  describe('public redirect checks', () => {
    it('session → conversation once the sandbox finished: for the team, and anonymously only when shared publicly', async () => {
      const privateRun = await startAgent({ calls: [] });
      const sharedRun = await startAgent({ calls: [] }, { session_sharing: { public_access: 'VIEWER' } });
      const [priv, shared] = await Promise.all(
        [privateRun, sharedRun].map((r) => waitForRunState(platform, r.runId, ['SUCCEEDED'])),
      );
      const check = (session: string, key: string | null) =>
        api('GET', `/agent/sessions/${session}/redirect`, { key });

      expect(await check(priv!.session_id as string, null)).toMatchObject({ status: 200, body: {} });
      expect((await check(priv!.session_id as string, null)).body).toEqual({});
      expect((await check(priv!.session_id as string, platform.apiKey)).body).toEqual({
        conversation_id: priv!.conversation_id,
      });
      expect((await check(priv!.session_id as string, otherKey)).body).toEqual({});
      expect((await check(shared!.session_id as string, null)).body).toEqual({
        conversation_id: shared!.conversation_id,
      });
      // Unknown and malformed IDs answer exactly like "no redirect".
      expect(await check(randomUUID(), null)).toMatchObject({ status: 200, body: {} });
      expect(await check('not-a-uuid', null)).toMatchObject({ status: 200, body: {} });
    });

    it('conversation → live session while the run executes, {} once it ended', async () => {
      const { runId } = await startAgent(
        { calls: [], holdMs: 4000 },
        { session_sharing: { public_access: 'VIEWER' } },
      );
      const live = await waitForRunState(platform, runId, ['INPROGRESS']);
      const check = (key: string | null) =>
        api('GET', `/agent/conversations/${live.conversation_id}/redirect`, { key });
      expect((await check(null)).body).toEqual({ session_id: live.session_id });
      expect((await check(otherKey)).body).toEqual({ session_id: live.session_id });
      await waitForRunState(platform, runId, ['SUCCEEDED']);
      expect(await check(null)).toMatchObject({ status: 200, body: {} });
      expect((await api('GET', `/agent/conversations/${randomUUID()}/redirect`, { key: null })).body).toEqual(
        {},
      );
    });
  });

  describe('create-run fields are honoured or rejected by name', () => {
    it('at_capacity: false with an idle runner connected, true for a self-hosted worker that is not connected', async () => {
      expect((await api('POST', '/agent/runs', { body: { prompt: 'hosted' } })).body.at_capacity).toBe(false);
      expect(
        (
          await api('POST', '/agent/runs', {
            body: { prompt: 'self-hosted', config: { worker_host: 'offline-worker' } },
          })
        ).body.at_capacity,
      ).toBe(true);
    });
    it('team: false and interactive: true are 400s naming the field', async () => {
      const team = await api('POST', '/agent/runs', { body: { prompt: 'x', team: false } });
      expect(team).toMatchObject({ status: 400, body: { detail: expect.stringMatching(/^team: /) } });
      const interactive = await api('POST', '/agent/runs', { body: { prompt: 'x', interactive: true } });
      expect(interactive).toMatchObject({
        status: 400,
        body: { detail: expect.stringMatching(/^interactive: /) },
      });
      expect(
        (await api('POST', '/agent/runs', { body: { prompt: 'x', team: true, interactive: false } })).status,
      ).toBe(200);
    });

    it('conversation_id continues a conversation of the team (prompt optional); unknown or foreign is 404', async () => {
      const first = await api('POST', '/agent/runs', { body: { prompt: 'first' } });
      const firstRun = (await api('GET', `/agent/runs/${first.body.run_id}`)).body;
      const next = await api('POST', '/agent/runs', { body: { conversation_id: firstRun.conversation_id } });
      expect(next.status).toBe(200);
      const nextRun = (await api('GET', `/agent/runs/${next.body.run_id}`)).body;
      expect(nextRun).toMatchObject({
        conversation_id: firstRun.conversation_id,
        prompt: 'Continue from where the previous run stopped.',
      });
      expect((await api('POST', '/agent/runs', { body: { conversation_id: randomUUID() } })).status).toBe(
        404,
      );
      expect(
        (
          await api('POST', '/agent/runs', {
            key: otherKey,
            body: { conversation_id: firstRun.conversation_id },
          })
        ).status,
      ).toBe(404);
    });

    it('on_behalf_of: only an agent key with on_behalf_of_enabled, and only for a member of the team', async () => {
      const mine = (
        await api(
          'GET',
          `/agent/runs/${(await api('POST', '/agent/runs', { body: { prompt: 'me' } })).body.run_id}`,
        )
      ).body;
      const userId = mine.creator.uid as string;
      expect((await api('POST', '/agent/runs', { body: { prompt: 'x', on_behalf_of: userId } })).status).toBe(
        403,
      );

      const keyOf = async (enabled: boolean) => {
        const agent = await api('POST', '/agent/identities', {
          body: { name: `obo-${enabled}-${randomUUID().slice(0, 8)}`, on_behalf_of_enabled: enabled },
        });
        expect(agent.status).toBe(201);
        return (await api('POST', `/agent/identities/${agent.body.uid}/api-keys`, { body: {} })).body
          .key as string;
      };
      const disabledKey = await keyOf(false);
      const denied = await api('POST', '/agent/runs', {
        key: disabledKey,
        body: { prompt: 'x', on_behalf_of: userId },
      });
      expect(denied).toMatchObject({
        status: 403,
        body: { detail: expect.stringMatching(/^on_behalf_of: /) },
      });

      const enabledKey = await keyOf(true);
      const created = await api('POST', '/agent/runs', {
        key: enabledKey,
        body: { prompt: 'x', on_behalf_of: userId },
      });
      expect(created.status).toBe(200);
      const run = (await api('GET', `/agent/runs/${created.body.run_id}`)).body;
      expect(run.creator).toMatchObject({ uid: userId, type: 'user' });
      expect(run.executor).toMatchObject({ type: 'service_account' });
      const stranger = await api('POST', '/agent/runs', {
        key: enabledKey,
        body: { prompt: 'x', on_behalf_of: 'nobody@nowhere.dev' },
      });
      expect(stranger).toMatchObject({
        status: 400,
        body: { detail: expect.stringMatching(/^on_behalf_of: /) },
      });
    });
  });
});
