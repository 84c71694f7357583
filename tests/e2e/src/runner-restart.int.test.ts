import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readdir, readFile, writeFile } from 'node:fs/promises';
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
  async function runWaitingForRelease(nonce: string, then = { text: `Released ${nonce}.` }): Promise<string> {
    const command = `while [ ! -e /workspace/release-${nonce} ]; do sleep 0.1; done; echo "$((6 * 7))-${nonce}"`;
    server.enqueue(
      { toolCalls: [{ name: 'Bash', input: { command, description: 'Wait for the release' } }] },
      then,
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
      // Recorded once: what the new process read again of the output is not on the timeline twice.
      expect(steps.filter((s) => s.type === 'tool_call' && JSON.stringify(s).includes(output))).toHaveLength(
        1,
      );
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

  it('follow-ups sent while no runner process is up reach the agent once each, in order, after its step', async () => {
    const nonce = randomUUID().slice(0, 8);
    const runId = await runWaitingForRelease(nonce);
    const runner = platform.process('runner')!;
    const exited = new Promise((resolve) => runner.once('exit', resolve));
    platform.kill('runner', 'SIGKILL');
    await exited;
    const followups = [`First follow-up ${nonce}`, `Second follow-up ${nonce}`];
    for (const message of followups) {
      const sent = await apiCall(platform, 'POST', `/agent/runs/${runId}/followups`, { message });
      expect(sent.status).toBe(200);
    }
    await expectFollowupsOnceAfterStep(runId, nonce, followups);
  });

  /**
   * With the runner started again and the step released: the run ends SUCCEEDED, its last turn's conversation holds
   * each follow-up once, in the order sent, after the step's output, and the model saw the run's first turn once.
   */
  async function expectFollowupsOnceAfterStep(
    runId: string,
    nonce: string,
    followups: string[],
  ): Promise<void> {
    await platform.restartRunner();
    await writeFile(path.join(workspaceRoot, runId, `release-${nonce}`), '');

    const done = await waitForRunState(platform, runId, ['SUCCEEDED', 'FAILED', 'ERROR'], RUN_TIMEOUT_MS);
    expect(done).toMatchObject({ state: 'SUCCEEDED' });
    const turns = server.requests.filter((r) => r.scripted && JSON.stringify(r.body).includes(nonce));
    const last = JSON.stringify(turns.at(-1)!.body);
    const at = [`${6 * 7}-${nonce}`, ...followups].map((text) => last.indexOf(text));
    expect(at.every((i) => i >= 0)).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
    for (const message of followups) expect(last.split(message)).toHaveLength(2);
    expect(turns.filter((r) => !JSON.stringify(r.body).includes(`${6 * 7}-${nonce}`))).toHaveLength(1);
  }

  /**
   * Whether a request of the runner's waits unread at the orchestrator: on one of the runner's connections to the
   * orchestrator's gRPC port, the orchestrator's end holds bytes it has not read (`ss`'s Recv-Q).
   */
  function runnerRequestWaiting(): boolean {
    const port = platform.orchestratorGrpcAddr.split(':').at(-1)!;
    const sockets = (filter: string) =>
      execFileSync('ss', ['-Htnp', 'state', 'established', filter], { encoding: 'utf8' })
        .split('\n')
        .filter(Boolean)
        .map((line) => line.trim().split(/\s+/));
    const runnerPid = platform.process('runner')!.pid!;
    // Columns (state filtered): Recv-Q Send-Q Local Peer Process.
    const runnerPorts = sockets(`( dport = :${port} )`)
      .filter((cols) => cols.slice(4).join(' ').includes(`pid=${runnerPid},`))
      .map((cols) => cols[2]!.split(':').at(-1));
    return sockets(`( sport = :${port} )`).some(
      (cols) => Number(cols[0]) > 0 && runnerPorts.includes(cols[3]!.split(':').at(-1)),
    );
  }

  it('a follow-up handed to a runner process killed before it gave it to the agent reaches the agent once', async () => {
    const nonce = randomUUID().slice(0, 8);
    const runId = await runWaitingForRelease(nonce);
    const runner = platform.process('runner')!;
    const orchestrator = platform.process('orchestrator')!;
    const followup = `A follow-up handed to a dying runner ${nonce}`;
    const db = createPrismaClient(platform.databaseUrl);
    try {
      // The follow-up waits while the runner is stopped; then the orchestrator is stopped with the runner's next
      // heartbeat (or batch) unread, and the runner stopped again before the answer comes: the orchestrator answers
      // into a runner that never reads it, which is then killed — the window between the hand-over and the harness.
      platform.kill('runner', 'SIGSTOP');
      const sent = await apiCall(platform, 'POST', `/agent/runs/${runId}/followups`, { message: followup });
      expect(sent.status).toBe(200);
      platform.kill('orchestrator', 'SIGSTOP');
      const before = (await db.run.findUniqueOrThrow({ where: { id: runId } })).lastHeartbeatAt!;
      platform.kill('runner', 'SIGCONT');
      await eventually(
        async () => runnerRequestWaiting(),
        'a runner request at the stopped orchestrator',
        platform,
        RUN_TIMEOUT_MS,
      );
      platform.kill('runner', 'SIGSTOP');
      platform.kill('orchestrator', 'SIGCONT');
      // The orchestrator has answered it: that statement wrote the heartbeat (and, before, took the follow-up).
      await eventually(
        async () =>
          (await db.run.findUniqueOrThrow({ where: { id: runId } })).lastHeartbeatAt!.getTime() >
          before.getTime(),
        'the orchestrator to answer the stopped runner',
        platform,
        RUN_TIMEOUT_MS,
      );
      const exited = new Promise((resolve) => runner.once('exit', resolve));
      platform.kill('runner', 'SIGKILL');
      await exited;
      expect(orchestrator.exitCode).toBeNull();
    } finally {
      await db.$disconnect();
    }
    await expectFollowupsOnceAfterStep(runId, nonce, [followup]);
  });

  it('a follow-up the claim handed to a runner killed before its harness started reaches the agent once', async () => {
    const nonce = randomUUID().slice(0, 8);
    const followup = `A follow-up sent before the start ${nonce}`;
    const db = createPrismaClient(platform.databaseUrl);
    let runId: string;
    try {
      // The run and its follow-up wait while the runner is stopped; the orchestrator is stopped with the runner's
      // ClaimRun unread, then answers it (the run CLAIMED, the follow-up handed over) into a runner stopped again,
      // which is then killed: the window between the claim and the harness's start.
      platform.kill('runner', 'SIGSTOP');
      server.enqueue({ text: `Answered ${nonce}.` });
      const created = await apiCall(platform, 'POST', '/agent/runs', {
        prompt: `Start ${nonce}`,
        config: { harness: { model_id: MODEL } },
      });
      expect(created.status).toBe(200);
      runId = created.body.run_id as string;
      const sent = await apiCall(platform, 'POST', `/agent/runs/${runId}/followups`, { message: followup });
      expect(sent.body).toMatchObject({ routed_to: 'queued_input' });
      platform.kill('orchestrator', 'SIGSTOP');
      platform.kill('runner', 'SIGCONT');
      await eventually(
        async () => runnerRequestWaiting(),
        'the runner ClaimRun at the stopped orchestrator',
        platform,
        RUN_TIMEOUT_MS,
      );
      platform.kill('runner', 'SIGSTOP');
      platform.kill('orchestrator', 'SIGCONT');
      await eventually(
        async () => (await db.run.findUniqueOrThrow({ where: { id: runId } })).state === 'CLAIMED',
        'the orchestrator to answer the claim',
        platform,
        RUN_TIMEOUT_MS,
      );
      const runner = platform.process('runner')!;
      const exited = new Promise((resolve) => runner.once('exit', resolve));
      platform.kill('runner', 'SIGKILL');
      await exited;
    } finally {
      await db.$disconnect();
    }
    await platform.restartRunner();
    // The lost-runner sweep queues the run again (RUNNER_LOST_AFTER_MS), with its unacknowledged follow-up.
    const done = await waitForRunState(platform, runId, ['SUCCEEDED', 'FAILED', 'ERROR'], RUN_TIMEOUT_MS);
    expect(done).toMatchObject({ state: 'SUCCEEDED' });
    // The model saw the run's first turn once (one request before its answer), and the last turn holds the
    // follow-up once.
    const turns = server.requests.filter((r) => r.scripted && JSON.stringify(r.body).includes(nonce));
    expect(turns.filter((r) => !JSON.stringify(r.body).includes(`Answered ${nonce}`))).toHaveLength(1);
    expect(JSON.stringify(turns.at(-1)!.body).split(followup)).toHaveLength(2);
  });

  /** The run's checkpoint of its first turn (the step requested), which a lost agent goes on from. */
  async function firstTurnCheckpointed(runId: string): Promise<void> {
    const checkpoints = path.join(`${workspaceRoot}-state`, 'checkpoints');
    await eventually(
      async () => {
        for (const root of await readdir(checkpoints).catch((): string[] => [])) {
          const text = await readFile(path.join(checkpoints, root, runId, 'checkpoint.json'), 'utf8').catch(
            () => undefined,
          );
          if (text && (JSON.parse(text) as { turn: number }).turn >= 1) return true;
        }
        return false;
      },
      'the first turn to be checkpointed',
      platform,
      RUN_TIMEOUT_MS,
    );
  }

  /** Kills the run's sandbox as a host would lose it: its keeper and everything under it. */
  async function killSandbox(runId: string): Promise<void> {
    const record = JSON.parse(
      await readFile(path.join(workspaceRoot, '.durable', runId, 'record.json'), 'utf8'),
    ) as { keeper: number };
    for (const pid of [record.keeper, ...descendantsOf(record.keeper)]) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone with the keeper already (bwrap --die-with-parent)
      }
    }
  }

  /** The run resumed once from its first turn and ended SUCCEEDED; the model saw its first turn once. */
  async function expectResumedOnce(runId: string, nonce: string, cause: RegExp): Promise<void> {
    const done = await waitForRunState(platform, runId, ['SUCCEEDED', 'FAILED', 'ERROR'], RUN_TIMEOUT_MS);
    expect(done).toMatchObject({ state: 'SUCCEEDED', status_message: { message: `Resumed ${nonce}.` } });
    const turns = server.requests.filter((r) => r.scripted && JSON.stringify(r.body).includes(nonce));
    const resumed = (r: (typeof turns)[number]) => JSON.stringify(r.body).includes('environment was lost');
    expect(turns.filter((r) => !resumed(r))).toHaveLength(1);
    expect(turns.filter(resumed)).toHaveLength(1);
    // The resumed conversation is one the real API accepts: the interrupted step's call has a result.
    type Block = { type: string; id?: string; tool_use_id?: string };
    const { messages } = turns.find(resumed)!.body as { messages: Array<{ content: string | Block[] }> };
    const blocks = messages.flatMap((m) => (Array.isArray(m.content) ? m.content : []));
    const answered = new Set(blocks.filter((b) => b.type === 'tool_result').map((b) => b.tool_use_id));
    const calls = blocks.filter((b) => b.type === 'tool_use');
    // The interrupted step is on it (the checkpoint holds the turn), answered by Claude Code as interrupted.
    expect(calls.length).toBeGreaterThan(0);
    expect(calls.filter((b) => !answered.has(b.id))).toEqual([]);
    const timeline = (await apiCall(platform, 'GET', `/agent/runs/${runId}/timeline`)).body as {
      events: Array<{ kind: string; data: Record<string, unknown> }>;
    };
    const lost = timeline.events.filter((e) => e.kind === 'agent_lost').map((e) => e.data);
    expect(lost).toEqual([expect.objectContaining({ resumed: true, turn: 1, resumption: 1 })]);
    expect(String(lost[0]!.text)).toMatch(/^Resumed after .* at turn 1$/);
    expect(String(lost[0]!.cause)).toMatch(cause);
  }

  /** A run whose one step waits for a release that never comes; after a resumption the model ends it. */
  async function runLosingItsSandbox(nonce: string): Promise<string> {
    const runId = await runWaitingForRelease(nonce, { text: `Resumed ${nonce}.` });
    await firstTurnCheckpointed(runId);
    return runId;
  }

  it('the sandbox killed mid-step under a live runner: the run goes on from its last turn and ends SUCCEEDED', async () => {
    const nonce = randomUUID().slice(0, 8);
    const runId = await runLosingItsSandbox(nonce);
    await killSandbox(runId);
    await expectResumedOnce(runId, nonce, /sandbox was killed/);
    expect(platform.logs()).not.toMatch(/stopped responding/);
  });

  it('the runner SIGKILLed and the sandbox lost meanwhile: the new runner process goes on from the last turn', async () => {
    const nonce = randomUUID().slice(0, 8);
    const runId = await runLosingItsSandbox(nonce);
    platform.kill('runner', 'SIGKILL');
    await killSandbox(runId);
    await platform.restartRunner();
    await expectResumedOnce(runId, nonce, /could not take its sandbox back/);
  });

  it('a follow-up the agent was given after its last checkpointed turn reaches the resumed session once', async () => {
    const nonce = randomUUID().slice(0, 8);
    const runId = await runLosingItsSandbox(nonce);
    const followup = `A follow-up while the step runs ${nonce}`;
    const sent = await apiCall(platform, 'POST', `/agent/runs/${runId}/followups`, { message: followup });
    expect(sent.status).toBe(200);
    const db = createPrismaClient(platform.databaseUrl);
    try {
      await eventually(
        async () => (await db.runFollowup.count({ where: { runId, deliveredAt: { not: null } } })) === 1,
        'the follow-up to reach the runner',
        platform,
        RUN_TIMEOUT_MS,
      );
    } finally {
      await db.$disconnect();
    }
    await killSandbox(runId);

    const done = await waitForRunState(platform, runId, ['SUCCEEDED', 'FAILED', 'ERROR'], RUN_TIMEOUT_MS);
    expect(done).toMatchObject({ state: 'SUCCEEDED' });
    const turns = server.requests.filter((r) => r.scripted && JSON.stringify(r.body).includes(nonce));
    const resumed = turns.filter((r) => JSON.stringify(r.body).includes('environment was lost'));
    expect(resumed.length).toBeGreaterThan(0);
    // The resumed conversation has the follow-up once, after the message saying where the agent is.
    const last = JSON.stringify(resumed.at(-1)!.body);
    expect(last.split(followup)).toHaveLength(2);
    expect(last.indexOf(followup)).toBeGreaterThan(last.indexOf('environment was lost'));
  });
});
