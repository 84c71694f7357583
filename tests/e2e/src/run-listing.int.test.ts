import OzAPI from 'oz-agent-sdk';
import { createBlobStore } from '@conveyor/blob-store';
import { createPrismaClient, newUuid, type Prisma, type PrismaClient } from '@conveyor/db';
import { otherTeamAdmin } from '@conveyor/testing';
import { startPlatform, type RunningPlatform } from './platform';

// Listing and inspection through the real gateway over HTTP and the official SDK. Runs, events, artifacts
// and transcripts are inserted straight into the platform's database, as the runner side would record them.

type Json = Record<string, unknown>;
const TEAM = 'team_dev'; // seeded by `conveyor seed-dev`

describe('run listing and inspection end to end', () => {
  let platform: RunningPlatform;
  let db: PrismaClient;
  let client: OzAPI;
  let otherKey: string;
  let otherTeam: string;
  const byName: Record<string, string> = {};
  let seq = 0;

  async function insertRun(teamId: string, data: Partial<Prisma.RunUncheckedCreateInput> = {}) {
    seq += 1;
    const at = new Date(Date.parse('2026-05-01T00:00:00.000Z') + seq * 60_000);
    return db.run.create({
      data: {
        id: newUuid(),
        teamId,
        title: `Listing run ${seq}`,
        prompt: `prompt ${seq}`,
        creatorId: 'user_dev',
        executorId: 'user_dev',
        conversationId: newUuid(),
        sessionId: newUuid(),
        createdAt: at,
        updatedAt: at,
        ...data,
      },
    });
  }

  beforeAll(async () => {
    platform = await startPlatform();
    db = createPrismaClient(platform.databaseUrl);
    client = new OzAPI({ apiKey: platform.apiKey, baseURL: platform.apiUrl, maxRetries: 0 });
    ({ teamId: otherTeam, key: otherKey } = await otherTeamAdmin(platform));

    for (let i = 0; i < 23; i++) await insertRun(TEAM, { state: 'SUCCEEDED' });
    const add = async (name: string, data: Partial<Prisma.RunUncheckedCreateInput>) => {
      byName[name] = (await insertRun(TEAM, data)).id;
    };
    await add('deploy', {
      title: 'Deploy payments to staging',
      state: 'INPROGRESS',
      skillSpec: 'acme/api:.claude/skills/deploy/SKILL.md',
      environmentId: 'AbCdEfGhIjKlMnOpQrStUv',
      metadata: { ticket_id: 'VIS-238', automation_id: 'auto_1' },
      modelId: 'claude-4',
    });
    await add('plan', {
      title: 'Plan the migration',
      state: 'QUEUED',
      source: 'SCHEDULED_AGENT',
      scheduleId: 'sched_1',
      metadata: { ticket_id: 'VIS-239' },
    });
    await add('child', {
      title: 'Child of deploy',
      state: 'FAILED',
      parentRunId: byName.deploy!,
      ancestorIds: [byName.deploy!],
      skillSpec: 'acme/api:.claude/skills/audit/SKILL.md',
    });
    await db.artifact.create({
      data: {
        id: newUuid(),
        runId: byName.plan!,
        type: 'PLAN',
        data: { document_uid: 'doc_1', title: 'Migration plan' },
      },
    });
    byName.foreign = (await insertRun(otherTeam, { title: 'Deploy payments elsewhere' })).id;
  });

  afterAll(async () => {
    await db?.$disconnect();
    await platform?.stop();
  });

  const get = async (path: string, key: string = platform.apiKey, init: RequestInit = {}) => {
    const res = await fetch(`${platform.apiUrl}${path}`, {
      ...init,
      headers: { Authorization: `Bearer ${key}`, ...(init.headers ?? {}) },
    });
    const text = await res.text();
    let body: Json = {};
    try {
      body = text ? (JSON.parse(text) as Json) : {};
    } catch {
      body = { text };
    }
    return { status: res.status, headers: res.headers, body };
  };
  const runIds = (body: Json) => (body.runs as Json[]).map((r) => r.run_id as string);

  describe('GET /agent/runs', () => {
    it('filters by state (repeated), metadata pairs, q, environment, skill alias, artifact type and ancestor', async () => {
      expect(runIds((await get('/agent/runs?state=INPROGRESS&state=QUEUED')).body).sort()).toEqual(
        [byName.deploy, byName.plan].sort(),
      );
      expect(runIds((await get('/agent/runs?metadata%5Bticket_id%5D=VIS-238')).body)).toEqual([
        byName.deploy,
      ]);
      expect(runIds((await get('/agent/runs?metadata[ticket_id]=VIS-239&state=QUEUED')).body)).toEqual([
        byName.plan,
      ]);
      expect(runIds((await get('/agent/runs?q=payments')).body)).toEqual([byName.deploy]);
      expect(runIds((await get('/agent/runs?environment_id=AbCdEfGhIjKlMnOpQrStUv')).body)).toEqual([
        byName.deploy,
      ]);
      expect((await get('/agent/runs?environment_id=empty-environment&limit=100')).body.runs).toHaveLength(
        25,
      );
      expect(
        runIds((await get('/agent/runs?skill=acme%2Fapi%3A.claude%2Fskills%2Fdeploy%2FSKILL.md')).body),
      ).toEqual([byName.deploy]);
      expect(runIds((await get('/agent/runs?artifact_type=PLAN')).body)).toEqual([byName.plan]);
      expect(runIds((await get(`/agent/runs?ancestor_run_id=${byName.deploy}`)).body)).toEqual([
        byName.child,
      ]);
      expect(runIds((await get('/agent/runs?automation_id=auto_1')).body)).toEqual([byName.deploy]);
      expect(
        runIds((await get('/agent/runs?model_id=claude-4&source=API&execution_location=REMOTE')).body),
      ).toEqual([byName.deploy]);
      expect(runIds((await get('/agent/runs?schedule_id=sched_1')).body)).toEqual([byName.plan]);
      const recent = await get('/agent/runs?created_after=2026-05-01T00:23:30.117Z&limit=100');
      expect(runIds(recent.body).sort()).toEqual([byName.deploy, byName.plan, byName.child].sort());
    });

    it('returns RunItems with artifacts and page_info', async () => {
      const { status, body } = await get('/agent/runs?artifact_type=PLAN');
      expect(status).toBe(200);
      expect(body.page_info).toEqual({ has_next_page: false });
      const [item] = body.runs as Json[];
      expect(item).toMatchObject({
        run_id: byName.plan,
        task_id: byName.plan,
        state: 'QUEUED',
        source: 'SCHEDULED_AGENT',
      });
      expect(item!.artifacts).toEqual([
        {
          artifact_type: 'PLAN',
          created_at: expect.any(String),
          data: { document_uid: 'doc_1', title: 'Migration plan' },
        },
      ]);
    });

    it('sorts by agent with runs without a skill last, in both directions', async () => {
      for (const order of ['asc', 'desc']) {
        const ids = runIds((await get(`/agent/runs?sort_by=agent&sort_order=${order}&limit=3`)).body);
        expect(ids.slice(0, 2)).toEqual(
          order === 'asc' ? [byName.child, byName.deploy] : [byName.deploy, byName.child],
        );
        expect(ids).toHaveLength(3);
      }
    });

    it.each([
      ['state=DONE', 'state'],
      ['sort_by=priority', 'sort_by'],
      ['source=EMAIL', 'source'],
      ['created_after=yesterday', 'created_after'],
      ['updated_after=2026-13-01T00:00:00Z', 'updated_after'],
      ['environment_id=not-an-env', 'environment_id'],
      ['limit=101', 'limit'],
      ['artifact_type=VIDEO', 'artifact_type'],
      ['metadata[a]=1&metadata[b]=2&metadata[c]=3&metadata[d]=4&metadata[e]=5&metadata[f]=6', 'metadata'],
      ['cursor=garbage', 'cursor'],
    ])('400 invalid_request naming the parameter for %s', async (query, parameter) => {
      const { status, headers, body } = await get(`/agent/runs?${query}`);
      expect(status).toBe(400);
      expect(headers.get('content-type')).toMatch(/application\/problem\+json/);
      expect(body).toMatchObject({
        status: 400,
        type: expect.stringMatching(/invalid_request$/),
        retryable: false,
      });
      expect(body.detail).toMatch(new RegExp(parameter.replace(/[[\]]/g, '\\$&')));
    });

    it('404 resource_not_found, identical for a missing ancestor and another team’s run', async () => {
      const missing = await get(`/agent/runs?ancestor_run_id=${newUuid()}`);
      const foreign = await get(`/agent/runs?ancestor_run_id=${byName.foreign}`);
      expect(missing.status).toBe(404);
      expect(foreign.status).toBe(404);
      expect(foreign.body).toEqual(missing.body);
      expect(missing.body).toMatchObject({ type: expect.stringMatching(/resource_not_found$/) });
    });

    it('403 feature_not_available for metadata filters when the team has metadata filtering off', async () => {
      await db.team.update({ where: { id: otherTeam }, data: { metadataFilteringEnabled: false } });
      const res = await get('/agent/runs?metadata%5Bticket_id%5D=VIS-238', otherKey);
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ status: 403, type: expect.stringMatching(/feature_not_available$/) });
      // The other team sees only its own run.
      expect(runIds((await get('/agent/runs', otherKey)).body)).toEqual([byName.foreign]);
    });
  });

  describe('the official SDK', () => {
    it('lists with filters and follows next_cursor through every page without duplicates', async () => {
      const filtered = await client.agent.runs.list({ state: ['INPROGRESS', 'QUEUED'], q: 'payments' });
      expect(filtered.runs.map((r) => r.run_id)).toEqual([byName.deploy]);
      // Parameters the SDK sends but does not type (this version): metadata objects and sorting.
      const extra = { metadata: { ticket_id: 'VIS-239' }, sort_by: 'title', sort_order: 'asc' } as Record<
        string,
        unknown
      >;
      const byMetadata = await client.agent.runs.list(extra as Parameters<typeof client.agent.runs.list>[0]);
      expect(byMetadata.runs.map((r) => r.run_id)).toEqual([byName.plan]);

      // This SDK version (1.0.0-alpha.8) returns one page; auto-pagination is the same loop over next_cursor.
      const seen: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await client.agent.runs.list({
          limit: 7,
          created_after: '2026-01-01T00:00:00.000Z',
          ...(cursor ? { cursor } : {}),
        });
        seen.push(...page.runs.map((r) => r.run_id));
        cursor = page.page_info.has_next_page ? page.page_info.next_cursor : undefined;
        pages += 1;
        // A run created mid-way (newer than the cursor) does not shift later pages.
        if (pages === 1) await insertRun(TEAM, { createdAt: new Date(), updatedAt: new Date() });
      } while (cursor);
      expect(pages).toBe(4);
      expect(seen).toHaveLength(26);
      expect(new Set(seen).size).toBe(26);
      expect(seen).not.toContain(byName.foreign);
    });

    it('surfaces rejections as the SDK error classes', async () => {
      await expect(client.agent.runs.list({ environment_id: 'bad' })).rejects.toBeInstanceOf(
        OzAPI.BadRequestError,
      );
      await expect(
        client.agent.runs.list({ ancestor_run_id: newUuid() } as Parameters<
          typeof client.agent.runs.list
        >[0]),
      ).rejects.toBeInstanceOf(OzAPI.NotFoundError);
    });
  });

  describe('timeline, conversation and transcript', () => {
    let runId: string;
    let conversationId: string;

    beforeAll(async () => {
      const run = await insertRun(TEAM, { title: 'Inspected run', state: 'SUCCEEDED', execution: 2 });
      runId = run.id;
      conversationId = run.conversationId;
      const events: [number, Json][] = [
        [1, { kind: 'state_changed', from: null, to: 'QUEUED' }],
        [1, { kind: 'user_message', text: 'Fix the flaky test', source: 'prompt' }],
        [1, { kind: 'setup_step', step: 'repositories', status: 'succeeded' }],
        [1, { kind: 'state_changed', from: 'QUEUED', to: 'INPROGRESS' }],
        [1, { kind: 'agent_message', text: 'Running it.' }],
        [1, { kind: 'tool_call', call_id: 'c1', name: 'bash', input: { cmd: 'npm test' } }],
        [1, { kind: 'tool_result', call_id: 'c1', output: 'passed' }],
        [1, { kind: 'state_changed', from: 'INPROGRESS', to: 'SUCCEEDED' }],
        [2, { kind: 'followup_received', followup_id: 'f1', routed_to: 'new_execution' }],
        [2, { kind: 'user_message', text: 'Thanks, now the docs', source: 'followup' }],
        [2, { kind: 'agent_message', text: 'Done.' }],
      ];
      for (const [execution, data] of events)
        await db.runEvent.create({
          data: { runId, execution, kind: String(data.kind), data: data as Prisma.InputJsonValue },
        });
      const blobs = createBlobStore(db);
      await blobs.put(
        `transcripts/${runId}/1.jsonl`,
        Buffer.from('{"type":"exec1"}\n'),
        'application/x-ndjson',
      );
      await blobs.put(
        `transcripts/${runId}/2.jsonl`,
        Buffer.from('{"type":"exec2"}\n'),
        'application/x-ndjson',
      );
    });

    it('timeline: lifecycle and setup events in order', async () => {
      const { status, body } = await get(`/agent/runs/${runId}/timeline`);
      expect(status).toBe(200);
      expect(body.run_id).toBe(runId);
      expect((body.events as Json[]).map((e) => e.kind)).toEqual([
        'state_changed',
        'setup_step',
        'state_changed',
        'state_changed',
        'followup_received',
      ]);
      expect((body.events as Json[])[1]).toMatchObject({
        execution: 1,
        data: { step: 'repositories', status: 'succeeded' },
        created_at: expect.any(String),
      });
    });

    it('conversation by run and by conversation ID', async () => {
      const byRun = await get(`/agent/runs/${runId}/conversation`);
      const byId = await get(`/agent/conversations/${conversationId}`);
      expect(byRun.status).toBe(200);
      expect(byRun.headers.get('content-type')).toMatch(/application\/json/);
      expect(byId.body).toEqual(byRun.body);
      expect(byRun.body).toMatchObject({ conversation_id: conversationId, run_id: runId, run_ids: [runId] });
      const messages = byRun.body.messages as Json[];
      expect(messages.map((m) => m.role)).toEqual(['user', 'agent', 'user', 'agent']);
      expect((messages[1]!.steps as Json[])[1]).toMatchObject({
        type: 'tool_call',
        name: 'bash',
        status: 'completed',
        output: 'passed',
      });
    });

    it('transcript: 302 to a signed link that downloads without an API key, for the run and its conversation', async () => {
      for (const path of [
        `/agent/runs/${runId}/transcript`,
        `/agent/conversations/${conversationId}/transcript`,
      ]) {
        const res = await fetch(`${platform.apiUrl}${path}`, {
          headers: { Authorization: `Bearer ${platform.apiKey}` },
          redirect: 'manual',
        });
        expect(res.status).toBe(302);
        const location = res.headers.get('location')!;
        expect(location.startsWith(`${platform.apiUrl}/blobs/`)).toBe(true);
        const download = await fetch(location);
        expect(download.status).toBe(200);
        expect(download.headers.get('content-type')).toMatch(/application\/x-ndjson/);
        expect(await download.text()).toBe('{"type":"exec1"}\n{"type":"exec2"}\n');
      }
      // fetch follows the redirect by itself, as any HTTP client would.
      const followed = await fetch(`${platform.apiUrl}/agent/runs/${runId}/transcript`, {
        headers: { Authorization: `Bearer ${platform.apiKey}` },
      });
      expect(await followed.text()).toContain('exec2');
    });

    it('a tampered or unknown link is 403 in the error shape', async () => {
      const res = await fetch(`${platform.apiUrl}/agent/runs/${runId}/transcript`, {
        headers: { Authorization: `Bearer ${platform.apiKey}` },
        redirect: 'manual',
      });
      const location = res.headers.get('location')!;
      const tampered = location.slice(0, -3) + (location.endsWith('AAA') ? 'BBB' : 'AAA');
      for (const url of [tampered, `${platform.apiUrl}/blobs/nonsense`]) {
        const bad = await fetch(url);
        expect(bad.status).toBe(403);
        expect(await bad.json()).toMatchObject({
          status: 403,
          type: expect.stringMatching(/not_authorized$/),
        });
      }
    });

    it('404 alike for another team and unknown IDs; 404 for a run without a transcript yet', async () => {
      const paths = [
        `/agent/runs/${runId}/timeline`,
        `/agent/runs/${runId}/conversation`,
        `/agent/conversations/${conversationId}`,
        `/agent/runs/${runId}/transcript`,
        `/agent/conversations/${conversationId}/transcript`,
      ];
      for (const path of paths) {
        const foreign = await get(path, otherKey, { redirect: 'manual' });
        expect(foreign.status).toBe(404);
        expect(foreign.body).toMatchObject({ type: expect.stringMatching(/resource_not_found$/) });
        const unknown = await get(
          path.replace(runId, newUuid()).replace(conversationId, newUuid()),
          platform.apiKey,
          { redirect: 'manual' },
        );
        expect(unknown.status).toBe(404);
        expect(unknown.body.detail).toBe(foreign.body.detail);
      }
      const bare = await insertRun(TEAM);
      const none = await get(`/agent/runs/${bare.id}/transcript`, platform.apiKey, { redirect: 'manual' });
      expect(none.status).toBe(404);
    });
  });
});
