import { randomUUID } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createPrismaClient } from '@conveyor/db';
import { startScriptedModelServer, type ScriptedModelServer } from '@conveyor/testing';
import { startPlatform, type RunningPlatform } from './platform';
import { descendantsOf, processesMatching } from './process-identity';
import { apiCall, eventually, waitForRunState } from './run-waits';

// A restarted runner takes its runs back (docs/run-lifecycle.md "Runner restarts"): the real Claude Code CLI in its
// bubblewrap sandbox, against the scripted model server (the only fake, at the network seam), keeps running while its
// runner process is killed and started again, and the new process reads on, heartbeats and completes the run.
jest.setTimeout(300_000);

const MODEL = 'claude-sonnet-4-5';
const PROVIDER_KEY = `sk-e2e-provider-${randomUUID()}`;
const RUN_TIMEOUT_MS = 150_000;

describe('a restarted runner adopts its runs (bubblewrap, Claude Code)', () => {
  let server: ScriptedModelServer;
  let platform: RunningPlatform;
  const workspaceRoot = path.join(os.tmpdir(), `conveyor-adopt-${randomUUID()}`);

  beforeAll(async () => {
    server = await startScriptedModelServer();
    platform = await startPlatform({
      env: {
        RUN_SANDBOX: 'bubblewrap',
        WORKSPACE_ROOT: workspaceRoot,
        SANDBOX_STATE_DIR: `${workspaceRoot}-state`,
        DEFAULT_HARNESS: 'claude',
        ANTHROPIC_BASE_URL: server.url,
        MODELS_CONFIG: JSON.stringify({ models: [{ id: MODEL, provider: 'claude', harnesses: ['claude'] }] }),
        // The production default: the new runner process must be heartbeating again well before it.
        RUNNER_LOST_AFTER_MS: '30000',
      },
    });
    const secret = await apiCall(platform, 'PUT', '/secrets/ANTHROPIC_API_KEY', { value: PROVIDER_KEY });
    expect(secret.status).toBe(200);
  }, 120_000);

  afterAll(async () => {
    await platform?.stop();
    await server?.close();
  });

  /**
   * Starts a run whose one tool step waits in the sandbox until the test creates its release file, and returns once
   * that step is running.
   */
  async function runWaitingForRelease(nonce: string): Promise<string> {
    const command = `while [ ! -e /workspace/release-${nonce} ]; do sleep 0.1; done; echo "$((6 * 7))-${nonce}"`;
    server.enqueue(
      { toolCalls: [{ name: 'Bash', input: { command, description: 'Wait for the release' } }] },
      { text: `Released ${nonce}.` },
    );
    const created = await apiCall(platform, 'POST', '/agent/runs', {
      prompt: `Wait for release ${nonce}`,
      config: { harness: { model_id: MODEL } },
    });
    expect(created.status).toBe(200);
    const runId = created.body.run_id as string;
    await eventually(
      async () => (await processesMatching(`release-${nonce}`)).length > 0,
      'the tool step to run',
      platform,
      RUN_TIMEOUT_MS,
    );
    return runId;
  }

  it.each<NodeJS.Signals>(['SIGKILL', 'SIGTERM'])(
    'a %s of the runner mid-step: the new runner process takes the run back and it ends SUCCEEDED',
    async (signal) => {
      const nonce = randomUUID().slice(0, 8);
      const runId = await runWaitingForRelease(nonce);
      const agents = await processesMatching(`release-${nonce}`);

      const killedAt = Date.now();
      platform.kill('runner', signal);
      await platform.restartRunner();
      const readyAt = Date.now();
      // The agent never noticed: the step's shell (the oldest match; its forks for `sleep` match briefly too) is the
      // very one still running.
      expect(await processesMatching(`release-${nonce}`)).toContain(Math.min(...agents));

      await writeFile(path.join(workspaceRoot, runId, `release-${nonce}`), '');
      const done = await waitForRunState(platform, runId, ['SUCCEEDED', 'FAILED', 'ERROR'], RUN_TIMEOUT_MS);
      expect(done).toMatchObject({ state: 'SUCCEEDED', status_message: { message: `Released ${nonce}.` } });

      const turns = server.requests.filter((r) => r.scripted && JSON.stringify(r.body).includes(nonce));
      const output = `${6 * 7}-${nonce}`;
      // The model saw the run's first turn once (nothing started again), then the step's output.
      expect(turns.filter((r) => !JSON.stringify(r.body).includes(output))).toHaveLength(1);
      expect(turns.filter((r) => JSON.stringify(r.body).includes(output))).toHaveLength(1);

      // The run's timeline has the step's result, read by the new runner process from the agent's output file.
      const conversation = (await apiCall(platform, 'GET', `/agent/runs/${runId}/conversation`)).body as {
        messages: Array<{ role: string; steps: Array<Record<string, unknown>> }>;
      };
      const steps = conversation.messages.flatMap((m) => m.steps);
      expect(JSON.stringify(steps.filter((s) => s.type === 'tool_call'))).toContain(output);
      expect(platform.logs()).not.toMatch(/stopped responding/);
      process.stdout.write(`runner ${signal}: new runner ready ${readyAt - killedAt} ms after the kill\n`);
    },
  );

  it("the step ends while no runner process is up: its output and the agent's next model call (retried by the CLI) wait for the new process", async () => {
    const nonce = randomUUID().slice(0, 8);
    const runId = await runWaitingForRelease(nonce);
    const runner = platform.process('runner')!;
    const exited = new Promise((resolve) => runner.once('exit', resolve));
    const { socketsDir } = JSON.parse(
      await readFile(path.join(workspaceRoot, '.durable', runId, 'record.json'), 'utf8'),
    ) as { socketsDir: string };
    const killedAt = Date.now();
    platform.kill('runner', 'SIGKILL');
    await exited;
    // Measured: how long the sandbox's forwarders found nothing behind the model proxy's socket.
    const modelProxyBack = (async () => {
      for (;;) {
        const accepted = await new Promise<boolean>((resolve) => {
          const socket = net.connect(path.join(socketsDir, 'endpoint-0.sock'));
          socket.once('connect', () => (socket.destroy(), resolve(true)));
          socket.once('error', () => resolve(false));
        });
        if (accepted) return Date.now() - killedAt;
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    // The step's output goes to the agent's output file with no runner reading it, and Claude Code's next request
    // finds no model proxy behind the sandbox's forwarder: a connection error, which the CLI retries.
    await writeFile(path.join(workspaceRoot, runId, `release-${nonce}`), '');
    const restartedAt = new Date();
    await platform.restartRunner();

    const done = await waitForRunState(platform, runId, ['SUCCEEDED', 'FAILED', 'ERROR'], RUN_TIMEOUT_MS);
    expect(done).toMatchObject({ state: 'SUCCEEDED', status_message: { message: `Released ${nonce}.` } });
    const output = `${6 * 7}-${nonce}`;
    const turns = server.requests.filter((r) => r.scripted && JSON.stringify(r.body).includes(nonce));
    expect(turns.filter((r) => !JSON.stringify(r.body).includes(output))).toHaveLength(1);
    expect(turns.filter((r) => JSON.stringify(r.body).includes(output))).toHaveLength(1);

    // Measured, not asserted: from the new runner process's start to the run's first event it reported.
    const db = createPrismaClient(platform.databaseUrl);
    try {
      const first = await db.runEvent.findFirst({
        where: { runId, createdAt: { gte: restartedAt } },
        orderBy: { id: 'asc' },
      });
      expect(first).not.toBeNull();
      process.stdout.write(`model proxy back at the same socket ${await modelProxyBack} ms after the kill\n`);
      process.stdout.write(
        `runner restart to the run streaming again: ${first!.createdAt.getTime() - restartedAt.getTime()} ms (${first!.kind})\n`,
      );
    } finally {
      await db.$disconnect();
    }
  });

  it('ends the run ERROR naming why when its sandbox did not survive the restart; it is not started again', async () => {
    const nonce = randomUUID().slice(0, 8);
    const runId = await runWaitingForRelease(nonce);
    const requestsBefore = server.requests.filter((r) => r.scripted).length;
    platform.kill('runner', 'SIGKILL');
    // The host loses the sandbox meanwhile: its keeper and everything under it.
    const record = JSON.parse(
      await readFile(path.join(workspaceRoot, '.durable', runId, 'record.json'), 'utf8'),
    ) as { keeper: number };
    const tree = [record.keeper, ...descendantsOf(record.keeper)];
    for (const pid of tree) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone with the keeper already (bwrap --die-with-parent)
      }
    }
    await platform.restartRunner();

    const ended = await waitForRunState(platform, runId, ['SUCCEEDED', 'FAILED', 'ERROR'], RUN_TIMEOUT_MS);
    expect(ended).toMatchObject({ state: 'ERROR', status_message: { error_code: 'resource_unavailable' } });
    expect((ended.status_message as { message: string }).message).toBe(
      "The runner restarted and could not take the run back: the run's agent process is gone",
    );
    expect(server.requests.filter((r) => r.scripted).length).toBe(requestsBefore);
  });
});
