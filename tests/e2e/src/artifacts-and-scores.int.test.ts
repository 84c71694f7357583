import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { signBlobToken } from '@conveyor/blob-store';
import { otherTeamAdmin } from '@conveyor/testing';
import { runCli, startPlatform, type RunningPlatform } from './platform';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const AGENT = path.resolve(__dirname, '../fixtures/api-calling-agent.js');
// The orchestrator's development signing secret (services/orchestrator/src/config.ts), used to forge an expired link.

describe('artifacts, external references and judge scores end to end', () => {
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
      redirect: 'manual',
      headers: {
        ...(key ? { Authorization: `Bearer ${key}` } : {}),
        ...(options.body === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
    const text = await res.text();
    let body: Json = {};
    try {
      body = text ? (JSON.parse(text) as Json) : {};
    } catch {
      body = { text };
    }
    return { status: res.status, body, headers: res.headers, text };
  };

  async function waitForState(runId: string, states: string[], timeoutMs = 30_000): Promise<Json> {
    const deadline = Date.now() + timeoutMs;
    let last: Json = {};
    while (Date.now() < deadline) {
      last = (await api('GET', `/agent/runs/${runId}`)).body;
      if (states.includes(last.state as string)) return last;
      await new Promise((r) => setTimeout(r, 150));
    }
    throw new Error(
      `run ${runId} stayed ${String(last.state)}, wanted ${states.join('|')}\n${platform.logs().slice(-4000)}`,
    );
  }

  /** Starts a run of the API-calling agent and returns what its harness saw, once the run has ended. */
  async function runAgent(
    calls: unknown[],
    config: Json = {},
  ): Promise<{
    runId: string;
    key: string;
    baseUrl: string;
    results: Array<{ status: number; body: Json }>;
  }> {
    const out = path.join(os.tmpdir(), `agent-${randomUUID()}.json`);
    const created = await api('POST', '/agent/runs', {
      body: { prompt: JSON.stringify({ out, calls }), config: { harness: { type: 'claude' }, ...config } },
    });
    expect(created.status).toBe(200);
    const runId = created.body.run_id as string;
    const done = await waitForState(runId, ['SUCCEEDED', 'FAILED', 'ERROR']);
    expect(done.state).toBe('SUCCEEDED');
    return {
      runId,
      ...(JSON.parse(readFileSync(out, 'utf8')) as {
        key: string;
        baseUrl: string;
        results: Array<{ status: number; body: Json }>;
      }),
    };
  }

  const report = (body: unknown) => ({ method: 'POST', path: '/harness-support/report-artifact', body });
  const png = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');

  let reporter: Awaited<ReturnType<typeof runAgent>>;
  const uid = (i: number): string => reporter.results[i]!.body.artifact_uid as string;

  it('a harness reports artifacts with its run-scoped key; they appear on the run and in the artifact_type filter', async () => {
    // Shared publicly by its creator, so the run may publish the screenshot (docs/artifacts.md).
    const shared = { session_sharing: { public_access: 'VIEWER' } };
    reporter = await runAgent(
      [
        report({
          artifact_type: 'FILE',
          data: { filepath: 'out/report.txt', mime_type: 'text/plain', description: 'the report' },
          content_base64: Buffer.from('hello file').toString('base64'),
        }),
        report({
          artifact_type: 'SCREENSHOT',
          data: { mime_type: 'image/png', description: 'home page' },
          content_base64: png.toString('base64'),
          is_public: true,
        }),
        report({ artifact_type: 'PLAN', data: { title: 'Plan', content: '# Plan v1' } }),
        report({
          artifact_type: 'PLAN',
          artifact_uid: '$ref:2.artifact_uid',
          data: { title: 'Plan (revised)', content: '# Plan v2' },
        }),
        report({
          artifact_type: 'EXTERNAL_REFERENCE',
          data: {
            reference_type: 'linear_issue',
            url: 'HTTPS://Linear.App:443/acme/issue/ENG-7/#comment',
            title: 'ENG-7',
          },
        }),
        report({
          artifact_type: 'PULL_REQUEST',
          data: { url: 'https://github.com/acme/api/pull/7', branch: 'fix-7' },
        }),
        report({ artifact_type: 'FILE', data: { filepath: 'a.txt', mime_type: 'text/plain' } }),
        report({ artifact_type: 'PULL_REQUEST', data: { url: 'not a url', branch: 'b' } }),
        report({ artifact_type: 'VIDEO', data: {} }),
      ],
      shared,
    );
    const statuses = reporter.results.map((r) => r.status);
    expect(statuses).toEqual([201, 201, 201, 201, 201, 201, 400, 400, 400]);
    expect(reporter.key).toMatch(/^cvy_/);
    expect(reporter.baseUrl).toBe(platform.apiUrl);
    expect(reporter.results[0]!.body).toMatchObject({
      artifact_type: 'FILE',
      run_id: reporter.runId,
      data: { filename: 'report.txt', filepath: 'out/report.txt', size_bytes: 10, artifact_uid: uid(0) },
    });
    expect(reporter.results[3]!.body.artifact_uid).toBe(uid(2));
    expect(reporter.results[4]!.body.data.url).toBe('https://linear.app/acme/issue/ENG-7');

    const run = (await api('GET', `/agent/runs/${reporter.runId}`)).body;
    expect((run.artifacts as Json[]).map((a) => a.artifact_type)).toEqual([
      'FILE',
      'SCREENSHOT',
      'PLAN',
      'EXTERNAL_REFERENCE',
      'PULL_REQUEST',
    ]);
    const plan = (run.artifacts as Json[]).find((a) => a.artifact_type === 'PLAN')!;
    expect(plan.data).toMatchObject({
      artifact_uid: uid(2),
      title: 'Plan (revised)',
      document_uid: expect.any(String),
      notebook_uid: expect.any(String),
    });
    expect(plan.data.content).toBeUndefined();

    for (const type of ['FILE', 'EXTERNAL_REFERENCE', 'PULL_REQUEST']) {
      const listed = await api('GET', `/agent/runs?artifact_type=${type}`);
      expect(listed.status).toBe(200);
      expect((listed.body.runs as Json[]).map((r) => r.run_id)).toContain(reporter.runId);
    }
  });

  it('the run-scoped key writes only to its own run, and stops working when the execution ends', async () => {
    expect(
      (
        await api('POST', '/harness-support/report-artifact', {
          key: reporter.key,
          body: { artifact_type: 'PULL_REQUEST', data: { url: 'https://x.dev/1', branch: 'b' } },
        })
      ).status,
    ).toBe(401);
    const userKey = await api('POST', '/harness-support/report-artifact', {
      body: { artifact_type: 'PULL_REQUEST', data: { url: 'https://x.dev/1', branch: 'b' } },
    });
    expect(userKey.status).toBe(403);
    expect(userKey.body).toMatchObject({ status: 403, type: expect.stringMatching(/not_authorized$/) });
    expect((await api('POST', '/harness-support/report-artifact', { key: null, body: {} })).status).toBe(401);
  });

  it('GET /agent/artifacts/{uid}: signed URL for files, current content for plans; private ones only for the run team', async () => {
    const file = await api('GET', `/agent/artifacts/${uid(0)}`);
    expect(file.status).toBe(200);
    expect(file.body).toMatchObject({
      artifact_type: 'FILE',
      artifact_uid: uid(0),
      created_at: expect.any(String),
      data: {
        content_type: 'text/plain',
        filename: 'report.txt',
        filepath: 'out/report.txt',
        size_bytes: 10,
        description: 'the report',
      },
    });
    expect(Date.parse(file.body.data.expires_at as string)).toBeGreaterThan(Date.now());
    const downloaded = await fetch(file.body.data.download_url as string);
    expect(downloaded.status).toBe(200);
    expect(await downloaded.text()).toBe('hello file');

    const plan = await api('GET', `/agent/artifacts/${uid(2)}`);
    expect(plan.body).toMatchObject({
      artifact_type: 'PLAN',
      data: {
        content: '# Plan v2',
        content_type: 'text/markdown',
        title: 'Plan (revised)',
        document_uid: expect.any(String),
        notebook_uid: expect.any(String),
      },
    });

    // Private: anonymous and another team get the same 404 as an unknown UID; a malformed UID is a 400.
    for (const key of [null, otherKey]) {
      const denied = await api('GET', `/agent/artifacts/${uid(0)}`, { key });
      expect(denied.status).toBe(404);
      expect(denied.body).toMatchObject({ status: 404, type: expect.stringMatching(/resource_not_found$/) });
      expect((await api('GET', `/agent/artifacts/${uid(0)}/download`, { key })).status).toBe(404);
    }
    expect((await api('GET', `/agent/artifacts/${randomUUID()}`)).status).toBe(404);
    const malformed = await api('GET', '/agent/artifacts/not-a-uuid');
    expect(malformed.status).toBe(400);
    expect(malformed.body.type).toMatch(/invalid_request$/);
    expect((await api('GET', '/agent/artifacts/not-a-uuid/download', { key: null })).status).toBe(400);
  });

  it('public artifacts need no key, from anyone', async () => {
    const shot = await api('GET', `/agent/artifacts/${uid(1)}`, { key: null });
    expect(shot.status).toBe(200);
    expect(shot.body).toMatchObject({
      artifact_type: 'SCREENSHOT',
      data: { content_type: 'image/png', description: 'home page' },
    });
    const bytes = Buffer.from(await (await fetch(shot.body.data.download_url as string)).arrayBuffer());
    expect(bytes.equals(png)).toBe(true);
    expect((await api('GET', `/agent/artifacts/${uid(1)}`, { key: otherKey })).status).toBe(200);
  });

  it('/download redirects to a signed URL; links expire and cannot be tampered with', async () => {
    const redirect = await api('GET', `/agent/artifacts/${uid(0)}/download`);
    expect(redirect.status).toBe(302);
    const location = redirect.headers.get('location')!;
    expect(location.startsWith(`${platform.apiUrl}/blobs/`)).toBe(true);
    expect(await (await fetch(location)).text()).toBe('hello file');
    expect((await api('GET', `/agent/artifacts/${uid(1)}/download`, { key: null })).status).toBe(302);
    expect((await api('GET', `/agent/artifacts/${uid(2)}/download`)).status).toBe(302);
    // Pull requests and external references have nothing to download.
    const pr = await api('GET', `/agent/artifacts/${uid(5)}/download`);
    expect(pr.status).toBe(422);
    expect(pr.body.type).toMatch(/operation_not_supported$/);
    expect((await api('GET', `/agent/artifacts/${uid(5)}`)).body).toMatchObject({
      artifact_type: 'PULL_REQUEST',
      data: { url: 'https://github.com/acme/api/pull/7', branch: 'fix-7' },
    });

    const token = location.slice(location.lastIndexOf('/') + 1);
    const [encodedKey, exp, sig] = token.split('.') as [string, string, string];
    const flip = (s: string) => `${s.slice(0, -2)}${s.at(-2) === 'A' ? 'B' : 'A'}${s.at(-1)}`;
    for (const tampered of [
      `${encodedKey}.${Number(exp) + 3600}.${sig}`,
      `${encodedKey}.${exp}.${flip(sig)}`,
      `${Buffer.from(`artifacts/${reporter.runId}/${uid(1)}`).toString('base64url')}.${exp}.${sig}`,
      'garbage',
    ]) {
      const res = await api('GET', `/blobs/${tampered}`, { key: null });
      expect(res.status).toBe(403);
      expect(res.body.type).toMatch(/not_authorized$/);
    }
    const blobKey = Buffer.from(encodedKey, 'base64url').toString('utf8');
    const expired = signBlobToken(
      blobKey,
      new Date(Date.now() - 1000),
      platform.trust.keys.BLOB_SIGNING_SECRET,
    );
    const res = await api('GET', `/blobs/${expired}`, { key: null });
    expect(res.status).toBe(403);
    expect(res.body.detail ?? res.body.error).toMatch(/expired|invalid/);
    // The same key signed with a fresh expiry works: only the expiry made the difference.
    expect(
      (
        await api(
          'GET',
          `/blobs/${signBlobToken(blobKey, new Date(Date.now() + 60_000), platform.trust.keys.BLOB_SIGNING_SECRET)}`,
          { key: null },
        )
      ).status,
    ).toBe(200);
  });

  it('GET /agent/run-by-external-reference finds the run by canonical URL, 404 otherwise and for other teams', async () => {
    for (const url of [
      'https://linear.app/acme/issue/ENG-7',
      'https://LINEAR.app/acme/issue/ENG-7/',
      'https://linear.app/acme/issue/ENG-7#top',
    ]) {
      const found = await api('GET', `/agent/run-by-external-reference?url=${encodeURIComponent(url)}`);
      expect(found.status).toBe(200);
      expect(found.body).toMatchObject({ run_id: reporter.runId, state: 'SUCCEEDED' });
    }
    const hidden = await api(
      'GET',
      `/agent/run-by-external-reference?url=${encodeURIComponent('https://linear.app/acme/issue/ENG-7')}`,
      { key: otherKey },
    );
    const unknown = await api(
      'GET',
      `/agent/run-by-external-reference?url=${encodeURIComponent('https://linear.app/acme/issue/ENG-8')}`,
    );
    expect(hidden.status).toBe(404);
    expect(unknown.status).toBe(404);
    expect(hidden.body).toEqual({ ...unknown.body, instance: hidden.body.instance });
    expect((await api('GET', '/agent/run-by-external-reference')).status).toBe(400);
    expect(
      (
        await api(
          'GET',
          `/agent/run-by-external-reference?url=${encodeURIComponent('https://linear.app/acme/issue/ENG-7')}`,
          { key: null },
        )
      ).status,
    ).toBe(401);
  });

  it('scores: only the judge dispatched for the run may submit; each verdict is accepted or rejected on its own', async () => {
    const other = await api('POST', '/agent/runs', { body: { prompt: '@demo message other' } });
    const otherRunId = other.body.run_id as string;
    const out = path.join(os.tmpdir(), `judge-${randomUUID()}.json`);
    const scores = (runId: string, verdicts: unknown[]) => ({
      method: 'POST',
      path: `/agent/runs/${runId}/scores`,
      body: { verdicts },
    });
    const prompt = JSON.stringify({
      out,
      calls: [
        scores(reporter.runId, [
          { evaluation: 'correctness', score: 0.9, passed: true, reasoning: 'tests pass' },
          { evaluation: 'style', score: 1.5 },
          { evaluation: 'speed', score: 0.2 },
          { evaluation: 'correctness', score: 0.1 },
          'not an object',
        ]),
        scores(reporter.runId, [
          { evaluation: 'correctness', score: 0.5 },
          { evaluation: 'style', score: 0.75 },
        ]),
        scores(otherRunId, [{ evaluation: 'correctness', score: 1 }]),
        scores(reporter.runId, []),
      ],
    });
    const dispatched = JSON.parse(
      await runCli(
        [
          'judge',
          'dispatch',
          '--run',
          reporter.runId,
          '--evaluation',
          'correctness,style',
          '--config',
          JSON.stringify({ harness: { type: 'claude' } }),
          '--prompt',
          prompt,
        ],
        platform.env,
      ),
    ) as { judgeRunId: string; evaluations: string[] };
    expect(dispatched.evaluations).toEqual(['correctness', 'style']);
    const judge = await waitForState(dispatched.judgeRunId, ['SUCCEEDED', 'FAILED', 'ERROR']);
    expect(judge).toMatchObject({ state: 'SUCCEEDED', source: 'RUN_SCORER' });
    const { results } = JSON.parse(readFileSync(out, 'utf8')) as {
      results: Array<{ status: number; body: Json }>;
    };

    expect(results[0]!.status).toBe(200);
    expect(results[0]!.body).toMatchObject({
      run_id: reporter.runId,
      judge_run_id: dispatched.judgeRunId,
      accepted: 1,
      rejected: 4,
    });
    expect((results[0]!.body.results as Json[]).map((r) => [r.index, r.accepted, r.reason])).toEqual([
      [0, true, undefined],
      [1, false, 'malformed'],
      [2, false, 'unknown_evaluation'],
      [3, false, 'duplicate_in_request'],
      [4, false, 'malformed'],
    ]);
    // A later request may report the remaining evaluations; a recorded one is final.
    expect((results[1]!.body.results as Json[]).map((r) => [r.evaluation, r.accepted, r.reason])).toEqual([
      ['correctness', false, 'already_recorded'],
      ['style', true, undefined],
    ]);
    expect(results[2]!.status).toBe(403);
    expect(results[2]!.body.type).toMatch(/not_authorized$/);
    expect(results[3]!.status).toBe(400);

    // Any other key is refused: the team's own user key (403) and another team's (the same 404 as a missing run).
    expect(
      (
        await api('POST', `/agent/runs/${reporter.runId}/scores`, {
          body: { verdicts: [{ evaluation: 'style', score: 1 }] },
        })
      ).status,
    ).toBe(403);
    expect(
      (
        await api('POST', `/agent/runs/${reporter.runId}/scores`, {
          key: otherKey,
          body: { verdicts: [{ evaluation: 'style', score: 1 }] },
        })
      ).status,
    ).toBe(404);
    expect(
      (
        await api('POST', `/agent/runs/${reporter.runId}/scores`, {
          key: reporter.key,
          body: { verdicts: [{ evaluation: 'style', score: 1 }] },
        })
      ).status,
    ).toBe(401);
  });
});
