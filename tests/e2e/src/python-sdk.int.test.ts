import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { startPlatform, type RunningPlatform } from './platform';
import { runProgram, venvBin } from './python-tools';
import { apiCall, waitForRunState } from './run-waits';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const AGENT = path.resolve(__dirname, '../fixtures/api-calling-agent.js');
const SCRIPT = path.resolve(__dirname, '../python/sdk_every_method.py');

/** The SDK's 23 methods (oz-agent-sdk 0.15.0 from PyPI): every one is called and must succeed. */
const METHODS = [
  'agent.list',
  'agent.list_environments',
  'agent.get_artifact',
  'agent.run',
  'agent.runs.retrieve',
  'agent.runs.list',
  'agent.runs.submit_followup',
  'agent.runs.cancel',
  'agent.runs.list_handoff_attachments',
  'agent.sessions.check_redirect',
  'agent.conversations.check_redirect',
  'agent.schedules.create',
  'agent.schedules.retrieve',
  'agent.schedules.update',
  'agent.schedules.list',
  'agent.schedules.pause',
  'agent.schedules.resume',
  'agent.schedules.delete',
  'agent.agent.create',
  'agent.agent.get',
  'agent.agent.update',
  'agent.agent.list',
  'agent.agent.delete',
];

describe('the official Python SDK (oz-agent-sdk from PyPI) against the live platform', () => {
  let platform: RunningPlatform;
  let output: {
    sdk_version: string;
    results: Record<string, { ok: boolean; value?: Json; status?: number; body?: unknown }>;
  };
  let handoff: { runId: string; attachmentId: string; artifactUid: string; run: Json };
  let liveRunId: string;

  /** A run of the API-calling agent (fixtures/api-calling-agent.js). */
  async function startAgent(task: Json, config: Json = {}): Promise<{ runId: string; out: string }> {
    const out = path.join(os.tmpdir(), `agent-${randomUUID()}.json`);
    const created = await apiCall(platform, 'POST', '/agent/runs', {
      prompt: JSON.stringify({ out, ...task }),
      config: { harness: { type: 'claude' }, ...config },
    });
    expect(created.status).toBe(200);
    return { runId: created.body.run_id as string, out };
  }

  beforeAll(async () => {
    platform = await startPlatform({
      env: { HARNESS_COMMANDS: JSON.stringify({ claude: `${process.execPath} ${AGENT}` }) },
    });
    const ended = await startAgent(
      {
        calls: [
          {
            method: 'POST',
            path: '/harness-support/handoff-attachments',
            body: { filename: 'session.jsonl', content_base64: Buffer.from('{}\n').toString('base64') },
          },
          {
            method: 'POST',
            path: '/harness-support/report-artifact',
            body: {
              artifact_type: 'FILE',
              data: { filepath: 'out/report.txt', mime_type: 'text/plain' },
              content_base64: Buffer.from('report').toString('base64'),
            },
          },
        ],
        // The SDK's redirect checks carry no key: only a publicly shared session answers them.
      },
      { session_sharing: { public_access: 'VIEWER' } },
    );
    const run = await waitForRunState(platform, ended.runId, ['SUCCEEDED']);
    const { results } = JSON.parse(readFileSync(ended.out, 'utf8')) as {
      results: Array<{ status: number; body: Json }>;
    };
    handoff = {
      runId: ended.runId,
      attachmentId: results[0]!.body.attachment_id as string,
      artifactUid: results[1]!.body.artifact_uid as string,
      run,
    };
    const live = await startAgent({ calls: [], holdMs: 60_000 });
    liveRunId = live.runId;
    await waitForRunState(platform, live.runId, ['INPROGRESS']);

    const result = await runProgram(venvBin('python'), [SCRIPT], {
      ...process.env,
      OZ_API_BASE_URL: platform.apiUrl,
      WARP_API_KEY: platform.apiKey,
      HANDOFF_RUN_ID: handoff.runId,
      ARTIFACT_UID: handoff.artifactUid,
      LIVE_RUN_ID: live.runId,
    });
    if (result.code !== 0)
      throw new Error(
        `sdk_every_method.py exited ${result.code}:\n${result.stderr}\n${platform.logs().slice(-3000)}`,
      );
    output = JSON.parse(result.stdout) as typeof output;
  }, 180_000);

  afterAll(async () => {
    await platform?.stop();
  });

  it('is the pinned PyPI release', () => {
    expect(output.sdk_version).toBe('0.15.0');
  });

  it('every method succeeds', () => {
    expect(Object.keys(output.results).sort()).toEqual([...METHODS].sort());
    const failed = Object.entries(output.results).filter(([, r]) => !r.ok);
    expect(failed).toEqual([]);
  });

  it('returns what the platform holds, parsed into the SDK models', () => {
    const r = (name: string) => output.results[name]!.value as Json;
    const runId = r('agent.run').run_id as string;
    expect(r('agent.run')).toMatchObject({ task_id: runId, state: 'QUEUED', at_capacity: false });
    expect(r('agent.runs.retrieve')).toMatchObject({
      run_id: runId,
      title: 'python',
      metadata: { sdk: 'python' },
      session_link: expect.stringContaining(`/console/runs/${runId}`),
    });
    expect(r('agent.runs.list')).toContain(runId);
    expect(new Set(r('agent.runs.list') as unknown as string[]).size).toBe(
      (r('agent.runs.list') as unknown as string[]).length,
    );
    expect(r('agent.runs.list_handoff_attachments')).toEqual({
      attachments: [
        {
          attachment_id: handoff.attachmentId,
          filename: 'session.jsonl',
          download_url: expect.stringContaining('/blobs/'),
          mime_type: null,
        },
      ],
    });
    expect(r('agent.get_artifact')).toMatchObject({
      artifact_type: 'FILE',
      artifact_uid: handoff.artifactUid,
      data: { filename: 'report.txt' },
    });
    expect(r('agent.sessions.check_redirect')).toEqual({ conversation_id: handoff.run.conversation_id });
    expect(r('agent.conversations.check_redirect')).toEqual({ session_id: null });
    expect(r('agent.schedules.update')).toMatchObject({ name: 'py nightly 2', cron_schedule: '0 4 * * *' });
    expect(r('agent.schedules.pause')).toMatchObject({ enabled: false });
    expect(r('agent.schedules.resume')).toMatchObject({ enabled: true });
    expect(r('agent.schedules.delete')).toEqual({ success: true });
    expect(r('agent.agent.update')).toMatchObject({ name: 'py-agent', description: 'updated' });
    expect((r('agent.agent.list').agents as Json[]).map((a) => a.name)).toContain('py-agent');
  });

  it('the cancelled run is CANCELLED on the platform', async () => {
    const cancelled = output.results['agent.runs.cancel']!.value as unknown as string;
    expect(cancelled).toBe(liveRunId);
    expect((await waitForRunState(platform, cancelled, ['CANCELLED'])).state).toBe('CANCELLED');
  });
});
