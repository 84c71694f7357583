import { randomUUID } from 'node:crypto';
import { startScriptedModelServer, type ScriptedModelServer } from '@conveyor/testing';
import { startPlatform, type RunningPlatform } from './platform';
import { apiCall, waitForRunState, type Json } from './run-waits';

const GOOD_KEY = `sk-ant-cli-good-${randomUUID()}`;
const WRONG_KEY = `sk-ant-cli-wrong-${randomUUID()}`;

/**
 * The real Claude Code CLI, started by the platform for a run with `harness.type: claude`, reaches the scripted
 * Anthropic server only through the runner's model proxy (docs/harnesses.md): the server sees the team secret's key,
 * and a key the provider refuses fails the run with external_authentication_required.
 */
describe('a real CLI run gets its model through the model proxy', () => {
  let platform: RunningPlatform;
  let model: ScriptedModelServer;

  beforeAll(async () => {
    model = await startScriptedModelServer([], { acceptedKeys: [GOOD_KEY] });
    platform = await startPlatform({ env: { ANTHROPIC_BASE_URL: model.url } });
    for (const [name, value] of [
      ['ANTHROPIC_API_KEY', GOOD_KEY],
      ['WRONG_ANTHROPIC_KEY', WRONG_KEY],
    ]) {
      expect((await apiCall(platform, 'PUT', `/secrets/${name}`, { value })).status).toBe(200);
    }
  }, 180_000);

  afterAll(async () => {
    await platform?.stop();
    await model?.close();
  });

  it("hands the team secret's key to the model, never the run token, and keeps it out of the run's records", async () => {
    model.enqueue({ text: 'All done through the proxy.' });
    const created = await apiCall(platform, 'POST', '/agent/runs', {
      prompt: 'Say you are done',
      config: { harness: { type: 'claude' } },
    });
    expect(created.status).toBe(200);
    const runId = created.body.run_id as string;
    const run = await waitForRunState(platform, runId, ['SUCCEEDED', 'FAILED', 'ERROR'], 150_000);
    expect(run.state).toBe('SUCCEEDED');
    const agentTurns = model.requests.filter((r) => r.scripted);
    expect(agentTurns.length).toBeGreaterThan(0);
    for (const r of model.requests) expect(r.apiKey).toBe(GOOD_KEY);
    expect((agentTurns[0]!.body as Json).model).toBe('claude-sonnet-4');
    const conversation = JSON.stringify(
      (await apiCall(platform, 'GET', `/agent/runs/${runId}/conversation`)).body,
    );
    expect(conversation).toContain('All done through the proxy.');
    expect(conversation).not.toContain(GOOD_KEY);
    expect(platform.logs()).not.toContain(GOOD_KEY);
  }, 180_000);

  it('fails the run with external_authentication_required when the provider refuses the key', async () => {
    const created = await apiCall(platform, 'POST', '/agent/runs', {
      prompt: 'Say you are done',
      config: {
        harness: { type: 'claude' },
        harness_auth_secrets: { claude_auth_secret_name: 'WRONG_ANTHROPIC_KEY' },
      },
    });
    const run = await waitForRunState(
      platform,
      created.body.run_id as string,
      ['SUCCEEDED', 'FAILED', 'ERROR'],
      150_000,
    );
    expect(run.state).toBe('FAILED');
    expect((run.status_message as Json).error_code).toBe('external_authentication_required');
    expect(model.requests.some((r) => r.apiKey === WRONG_KEY)).toBe(true);
    expect(platform.logs()).not.toContain(WRONG_KEY);
  }, 180_000);
});
