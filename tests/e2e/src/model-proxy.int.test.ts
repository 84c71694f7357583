import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { startPlatform, type RunningPlatform } from './platform';
import { apiCall, waitForRunState, type Json } from './run-waits';

// Provider keys as a team stores them: the proxy must hand the first to the model and the agent must never see it.
const GOOD_KEY = `sk-ant-e2e-good-${randomUUID()}`;
const WRONG_KEY = `sk-ant-e2e-wrong-${randomUUID()}`;
const AGENT = path.resolve(__dirname, '../fixtures/model-calling-agent.js');

/**
 * Runs of an operator's command adapter for the `claude` harness type that reach Anthropic's wire protocol through
 * the runner's model proxy (docs/harnesses.md), against a scripted Anthropic Messages server on a local port: the
 * only fake, at the network seam.
 */
describe('model proxy end to end: credentials, metering, budget', () => {
  let platform: RunningPlatform;
  let model: Server;
  const seen: Array<{ url: string; headers: IncomingHttpHeaders; body: Json }> = [];

  beforeAll(async () => {
    // Anthropic Messages SSE; each answer costs 1000 input and 100 output tokens, and (misbehaving on purpose) echoes
    // the key it was called with, which the run's records must redact.
    model = createServer((req, res) => {
      let raw = '';
      req.on('data', (d: Buffer) => (raw += d.toString()));
      req.on('end', () => {
        const key = String(req.headers['x-api-key'] ?? '');
        seen.push({ url: req.url ?? '', headers: req.headers, body: JSON.parse(raw || '{}') as Json });
        if (key !== GOOD_KEY) {
          res.writeHead(401, { 'content-type': 'application/json' });
          res.end(
            JSON.stringify({
              type: 'error',
              error: { type: 'authentication_error', message: 'invalid x-api-key' },
            }),
          );
          return;
        }
        const event = (name: string, data: Json) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end(
          event('message_start', {
            type: 'message_start',
            message: { id: 'msg_1', role: 'assistant', usage: { input_tokens: 1000, output_tokens: 1 } },
          }) +
            event('content_block_delta', {
              type: 'content_block_delta',
              index: 0,
              delta: { type: 'text_delta', text: `Hello from the model, called with ${key}` },
            }) +
            event('message_delta', {
              type: 'message_delta',
              delta: { stop_reason: 'end_turn' },
              usage: { output_tokens: 100 },
            }) +
            event('message_stop', { type: 'message_stop' }),
        );
      });
    });
    model.listen(0, '127.0.0.1');
    await once(model, 'listening');
    const modelUrl = `http://127.0.0.1:${(model.address() as AddressInfo).port}`;
    platform = await startPlatform({
      env: {
        ANTHROPIC_BASE_URL: modelUrl,
        GIT_ALLOW_LOCAL_URLS: 'true',
        HARNESS_COMMANDS: JSON.stringify({ claude: `${process.execPath} ${AGENT}` }),
        // One answer costs $0.0045 (claude-sonnet-4 at $3/$15 per million): a run may make two, not three.
        MODELS_CONFIG: JSON.stringify({
          run_budget_usd: 0.01,
          models: [
            {
              id: 'claude-sonnet-4',
              provider: 'anthropic',
              cost: { input_usd_per_million_tokens: 3, output_usd_per_million_tokens: 15 },
            },
          ],
        }),
      },
    });
    for (const [name, value] of [
      ['ANTHROPIC_API_KEY', GOOD_KEY],
      ['WRONG_ANTHROPIC_KEY', WRONG_KEY],
    ]) {
      expect((await apiCall(platform, 'PUT', `/secrets/${name}`, { value })).status).toBe(200);
    }
  }, 180_000);

  afterAll(async () => {
    await platform?.stop();
    model?.close();
  });

  const startRun = async (task: Json, config: Json = {}): Promise<string> => {
    const res = await apiCall(platform, 'POST', '/agent/runs', {
      prompt: JSON.stringify(task),
      config: { harness: { type: 'claude' }, ...config },
    });
    expect(res.status).toBe(200);
    return res.body.run_id as string;
  };

  const transcriptOf = async (runId: string): Promise<string> => {
    const res = await fetch(`${platform.apiUrl}/agent/runs/${runId}/transcript`, {
      headers: { Authorization: `Bearer ${platform.apiKey}` },
    });
    const text = await res.text();
    if (res.status !== 200)
      throw new Error(`transcript: ${res.status} ${text}\n${platform.logs().slice(-3000)}`);
    return text;
  };

  it("hands the team secret's key to the model while the agent's shell cannot find it, and meters the run", async () => {
    const out = path.join(os.tmpdir(), `shell-${randomUUID()}.json`);
    const runId = await startRun({ task: 'chat', out });
    const run = await waitForRunState(platform, runId, ['SUCCEEDED', 'FAILED', 'ERROR'], 60_000);
    expect(run.state).toBe('SUCCEEDED');

    // The model got the real key, for the run's model, through the proxy; never the run's token.
    const call = seen.find((s) => s.body.model === 'claude-sonnet-4' && s.headers['x-api-key'] === GOOD_KEY);
    expect(call?.url).toBe('/v1/messages');
    expect(call?.headers.authorization).toBeUndefined();

    // Everything the agent's shell could read: the token is there (the search works), the key is not.
    const shell = readFileSync(out, 'utf8');
    const env = (JSON.parse(shell) as { env: Record<string, string> }).env;
    expect(env.ANTHROPIC_API_KEY).toMatch(/^cvr_/);
    expect(shell).toContain(env.ANTHROPIC_API_KEY);
    expect(shell).not.toContain(GOOD_KEY);
    expect(Object.keys(JSON.parse(shell).proc as Json).length).toBeGreaterThan(1);

    // The model echoed the key; the conversation and the transcript carry it redacted, the logs not at all.
    const conversation = (await apiCall(platform, 'GET', `/agent/runs/${runId}/conversation`)).body;
    expect(JSON.stringify(conversation)).toContain('Hello from the model, called with [REDACTED]');
    expect(JSON.stringify(conversation)).not.toContain(GOOD_KEY);
    const transcript = await transcriptOf(runId);
    expect(transcript).not.toContain(GOOD_KEY);
    expect(platform.logs()).not.toContain(GOOD_KEY);

    // The proxy's metering: 1000 tokens in, 100 out, $0.0045.
    const usage = transcript
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Json)
      .filter((e) => e.kind === 'usage');
    expect(usage).toHaveLength(1);
    expect(usage[0]).toMatchObject({ input_tokens: 1000, output_tokens: 100 });
    expect(usage[0]!.cost_usd as number).toBeCloseTo(0.0045, 10);
  }, 90_000);

  it('fails a run whose key the provider rejects with external_authentication_required', async () => {
    const runId = await startRun(
      { task: 'chat', out: path.join(os.tmpdir(), `shell-${randomUUID()}.json`) },
      { harness_auth_secrets: { claude_auth_secret_name: 'WRONG_ANTHROPIC_KEY' } },
    );
    const run = await waitForRunState(platform, runId, ['SUCCEEDED', 'FAILED', 'ERROR'], 60_000);
    expect(run.state).toBe('FAILED');
    expect((run.status_message as Json).error_code).toBe('external_authentication_required');
    expect((run.status_message as Json).message).toContain('WRONG_ANTHROPIC_KEY');
    expect(seen.some((s) => s.headers['x-api-key'] === WRONG_KEY)).toBe(true);
    const transcript = await transcriptOf(runId);
    expect(transcript).not.toContain(WRONG_KEY);
    expect(platform.logs()).not.toContain(WRONG_KEY);
  }, 90_000);

  it('stops a run that exceeds its budget with budget_exceeded', async () => {
    const before = seen.length;
    const runId = await startRun({ task: 'spend' });
    const run = await waitForRunState(platform, runId, ['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'], 60_000);
    expect(run.state).toBe('FAILED');
    expect((run.status_message as Json).error_code).toBe('budget_exceeded');
    // The third answer took it past $0.01; the proxy answered no further request.
    expect(seen.length - before).toBe(3);
  }, 90_000);

  it("records the changes to the environment's repositories as a FILE patch, and says when there were none", async () => {
    const origin = mkdtempSync(path.join(os.tmpdir(), 'origin-'));
    execFileSync('git', ['init', '-q', '-b', 'main', origin]);
    writeFileSync(path.join(origin, 'hello.txt'), 'hello world\n');
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@x.dev', 'add', '-A'], { cwd: origin });
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@x.dev', 'commit', '-q', '-m', 'hello'], {
      cwd: origin,
    });
    const env = await apiCall(platform, 'POST', '/agent/environments', {
      name: 'Repo env',
      repositories: [{ url: `file://${origin}`, directory: 'repo' }],
    });
    expect(env.status).toBe(201);
    const environmentId = env.body.uid as string;

    const edited = await startRun(
      { task: 'edit', file: 'repo/hello.txt', content: 'hello conveyor\n' },
      { environment_id: environmentId },
    );
    const run = await waitForRunState(platform, edited, ['SUCCEEDED', 'FAILED', 'ERROR'], 60_000);
    expect(run.state).toBe('SUCCEEDED');
    const artifacts = (run.artifacts as Json[]).filter((a) => a.artifact_type === 'FILE');
    expect(artifacts).toHaveLength(1);
    const file = artifacts[0]!.data as Json;
    expect(file).toMatchObject({
      filepath: `conveyor-run-${edited}-1.patch`,
      mime_type: 'text/x-diff',
      title: 'Workspace changes',
    });
    const artifact = (await apiCall(platform, 'GET', `/agent/artifacts/${String(file.artifact_uid)}`)).body;
    const patch = await (await fetch((artifact.data as Json).download_url as string)).text();
    expect(patch).toContain('diff --git a/repo/hello.txt b/repo/hello.txt');
    expect(patch).toContain('-hello world\n+hello conveyor\n');

    const untouched = await startRun({ task: 'edit' }, { environment_id: environmentId });
    const quiet = await waitForRunState(platform, untouched, ['SUCCEEDED', 'FAILED', 'ERROR'], 60_000);
    expect((quiet.status_message as Json).message).toBe('looked around (the agent changed no files)');
    expect((quiet.artifacts as Json[] | undefined) ?? []).toEqual([]);
  }, 120_000);

  it('refuses at creation a model the chosen harness cannot use', async () => {
    const res = await apiCall(platform, 'POST', '/agent/runs', {
      prompt: 'hi',
      config: { harness: { type: 'codex', model_id: 'claude-sonnet-4' } },
    });
    expect(res.status).toBe(400);
    expect(res.body.detail).toBe(
      'Model "claude-sonnet-4" cannot be used with the codex harness; models for it: none',
    );
  });
});
