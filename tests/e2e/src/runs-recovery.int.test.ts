import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createPrismaClient } from '@conveyor/db';
import { startPlatform, type RunningPlatform } from './platform';
import { apiCall, waitForRunState } from './run-waits';

// An agent CLI that lists the attachments it was given, then succeeds.
const AGENT = `
const fs = require('node:fs');
const rl = require('node:readline').createInterface({ input: process.stdin });
rl.on('line', (line) => {
  const msg = JSON.parse(line);
  if (msg.type !== 'start') return;
  const files = fs.readdirSync('attachments').sort();
  process.stdout.write(JSON.stringify({ kind: 'agent_message', text: 'attachments: ' + files.join(',') }) + '\\n');
  process.stdout.write(JSON.stringify({ kind: 'result', state: 'SUCCEEDED', message: 'listed ' + files.length }) + '\\n');
  process.exit(0);
});
`;

describe('runs: setup failures, debug sessions, command harness, lost runners', () => {
  let platform: RunningPlatform;

  beforeAll(async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'e2e-agent-'));
    await writeFile(path.join(dir, 'agent.js'), AGENT);
    platform = await startPlatform({
      env: {
        HARNESS_COMMANDS: JSON.stringify({ claude: `"${process.execPath}" "${path.join(dir, 'agent.js')}"` }),
      },
    });
  });

  afterAll(async () => {
    await platform?.stop();
  });

  const api = (method: string, p: string, body?: unknown) => apiCall(platform, method, p, body);

  it("shows a setup command's output (stdout and stderr) in the run's log when it succeeds", async () => {
    const environment = await api('POST', '/agent/environments', {
      name: 'with a chatty setup',
      setup_commands: ['echo "installed $((6 * 7)) packages"; echo "deprecated: left-pad" >&2'],
    });
    expect(environment.status).toBe(201);
    const created = await api('POST', '/agent/runs', {
      prompt: 'hello',
      config: { environment_id: environment.body.uid },
    });
    const runId = created.body.run_id as string;
    await waitForRunState(platform, runId, ['SUCCEEDED']);
    // The run's log: its `log` events, which the conversation shows as event steps (docs/runs.md).
    const conversation = (await api('GET', `/agent/runs/${runId}/conversation`)).body;
    const logs = (
      conversation.messages as Array<{ steps: Array<{ kind?: string; data?: { text?: string } }> }>
    )
      .flatMap((m) => m.steps)
      .filter((step) => step.kind === 'log')
      .map((step) => step.data?.text ?? '');
    // stdout and stderr are two pipes: their lines may arrive in either order.
    const output = logs.find((text) => text.includes('installed 42 packages'));
    expect(output).toMatch(/exited with 0:\n/);
    expect(output).toContain('deprecated: left-pad');
  });

  it('keeps a run that failed during setup FAILED while a debug agent answers in its retained session', async () => {
    const created = await api('POST', '/agent/runs', {
      prompt: '@demo setup-fail could not install dependencies',
    });
    const runId = created.body.run_id as string;
    const failed = await waitForRunState(platform, runId, ['FAILED']);
    expect(failed.status_message).toMatchObject({
      message: 'could not install dependencies',
      error_code: 'environment_setup_failed',
    });
    expect((failed.status_message as Record<string, unknown>).session_debug_until).toBeTruthy();

    const followup = await api('POST', `/agent/runs/${runId}/followups`, { message: 'why did npm fail?' });
    expect(followup.status).toBe(200);
    expect(followup.body.routed_to).toBe('debug_session');
    expect(followup.body.state).toBe('FAILED');
    // The debug agent answers in the run's event log; the run keeps its original failure.
    const db = createPrismaClient(platform.databaseUrl);
    try {
      const deadline = Date.now() + 15_000;
      let answers: unknown[] = [];
      while (answers.length === 0 && Date.now() < deadline) {
        const events = await db.runEvent.findMany({ where: { runId, kind: 'agent_message' } });
        answers = events.filter((e) =>
          JSON.stringify(e.data).includes('Debug agent in retained session: why did npm fail?'),
        );
        await new Promise((r) => setTimeout(r, 200));
      }
      expect(answers).toHaveLength(1);
    } finally {
      await db.$disconnect();
    }
    const after = (await api('GET', `/agent/runs/${runId}`)).body;
    expect(after.state).toBe('FAILED');
    expect(after.status_message).toMatchObject({
      message: 'could not install dependencies',
      error_code: 'environment_setup_failed',
    });
  });

  it('runs an agent CLI through the command harness with the run attachments in its workspace', async () => {
    const png = Buffer.from('89504e470d0a1a0a', 'hex').toString('base64');
    const created = await api('POST', '/agent/runs', {
      prompt: 'list your attachments',
      config: { harness: { type: 'claude' } },
      attachments: [{ data: png, file_name: 'screen.png', mime_type: 'image/png' }],
    });
    const done = await waitForRunState(platform, created.body.run_id as string, [
      'SUCCEEDED',
      'FAILED',
      'ERROR',
    ]);
    expect(done.state).toBe('SUCCEEDED');
    expect(done.status_message).toMatchObject({ message: 'listed 1' });
  });

  it('fails a built-in CLI harness run whose team has no provider key before anything starts', async () => {
    // Gemini CLI is built in (docs/harnesses.md): without the team secret GEMINI_API_KEY it cannot reach its model.
    const created = await api('POST', '/agent/runs', {
      prompt: 'x',
      config: { harness: { type: 'gemini' } },
    });
    const failed = await waitForRunState(platform, created.body.run_id as string, ['FAILED']);
    expect(failed.status_message).toMatchObject({ error_code: 'integration_not_configured' });
  });

  it('ends a run in ERROR with a clear code when its runner dies mid-run', async () => {
    const created = await api('POST', '/agent/runs', { prompt: '@demo sleep 120000' });
    const runId = created.body.run_id as string;
    await waitForRunState(platform, runId, ['INPROGRESS']);
    platform.kill('runner', 'SIGKILL');
    const lost = await waitForRunState(platform, runId, ['ERROR'], 30_000);
    expect(lost.status_message).toMatchObject({ error_code: 'resource_unavailable', retryable: true });
    expect((lost.status_message as Record<string, unknown>).message).toMatch(/stopped responding/);
  });
});
