import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { startScriptedModelServer, type ScriptedModelServer } from '@conveyor/testing';
import { runCli, startPlatform, type RunningPlatform } from './platform';
import { helperOf, identity, processesMatching } from './process-identity';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const ROOT = path.resolve(__dirname, '../../..');
const execId = (user: string) => spawnSync('id', ['-u', user], { encoding: 'utf8' }).stdout.trim();
const STALE_AFTER_MS = 4000;

describe('self-hosted workers end to end', () => {
  let platform: RunningPlatform;
  let token: string;
  let workerEndpoint: string;
  const workers: ChildProcess[] = [];
  let workerLogs = '';
  let modelServer: ScriptedModelServer;

  beforeAll(async () => {
    modelServer = await startScriptedModelServer();
    platform = await startPlatform({
      env: {
        WORKER_HEARTBEAT_INTERVAL_MS: '1000',
        WORKER_STALE_AFTER_MS: String(STALE_AFTER_MS),
        // The production default: a worker's next process must be heartbeating its runs again well before it.
        RUNNER_LOST_AFTER_MS: '30000',
        MODELS_CONFIG: JSON.stringify({ models: [{ id: 'claude-sonnet-4-5', provider: 'anthropic' }] }),
      },
    });
    token = (
      JSON.parse(
        await runCli(['worker-token', 'create', '--team', 'team_dev', '--name', 'e2e'], platform.env),
      ) as { token: string }
    ).token;
    workerEndpoint = platform.workerEndpointAddr;
  }, 120_000);

  afterAll(async () => {
    for (const w of workers) if (w.exitCode === null) w.kill('SIGKILL');
    await platform?.stop();
    await modelServer?.close();
  });

  function startWorker(env: NodeJS.ProcessEnv): ChildProcess {
    const child = spawn(process.execPath, [path.join(ROOT, 'services/runner/dist/worker-main.js')], {
      // The worker endpoint with the installation CA; the worker has no certificate and never sees the core listener.
      env: {
        ...process.env,
        WORKER_ENDPOINT: workerEndpoint,
        WORKER_ENDPOINT_CA_FILE: platform.trust.caFile,
        WORKSPACE_ROOT: path.join(os.tmpdir(), `worker-${randomUUID()}`),
        RUN_SANDBOX: 'none',
        RUN_SANDBOX_NONE_ACKNOWLEDGED: 'runs-are-not-isolated',
        LOG_LEVEL: 'info',
        ...env,
      },
    });
    child.stdout?.on('data', (d: Buffer) => (workerLogs += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (workerLogs += d.toString()));
    workers.push(child);
    return child;
  }

  const api = async (method: string, urlPath: string, body?: unknown) => {
    const res = await fetch(`${platform.apiUrl}${urlPath}`, {
      method,
      headers: {
        Authorization: `Bearer ${platform.apiKey}`,
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : {}) as Json };
  };

  async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const value = await probe();
      if (value !== undefined) return value;
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(
      `timed out waiting for ${what}\n${platform.logs().slice(-3000)}\n${workerLogs.slice(-3000)}`,
    );
  }

  /** A worker on the local sandbox, started as root as its installation does. */
  const startSandboxedWorker = (workerId: string, env: NodeJS.ProcessEnv = {}) =>
    startWorker({
      CONVEYOR_WORKER_TOKEN: token,
      WORKER_ID: workerId,
      RUN_SANDBOX: 'bubblewrap',
      SANDBOX_STATE_DIR: path.join(os.tmpdir(), `worker-state-${randomUUID()}`),
      ...env,
    });

  const ended = (runId: string, timeoutMs?: number) =>
    until(
      `run ${runId} to end`,
      async () => {
        const run = (await api('GET', `/agent/runs/${runId}`)).body;
        return ['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'].includes(run.state as string) ? run : undefined;
      },
      timeoutMs,
    );

  const listed = async (): Promise<Json[]> => {
    const res = await api('GET', '/agent/connected-self-hosted-workers');
    expect(res.status).toBe(200);
    return res.body.workers as Json[];
  };

  it('a self-hosted run waits for its worker; the cloud pool never takes it', async () => {
    const created = await api('POST', '/agent/runs', {
      prompt: 'on my box\n@demo message hello from the worker',
      config: { worker_host: 'box-1' },
    });
    expect(created.status).toBe(200);
    const runId = created.body.run_id as string;
    await new Promise((r) => setTimeout(r, 2500));
    expect((await api('GET', `/agent/runs/${runId}`)).body.state).toBe('QUEUED');
    expect(await listed()).toEqual([]);

    const worker = startWorker({ CONVEYOR_WORKER_TOKEN: token, WORKER_ID: 'box-1', WORKER_CAPACITY: '2' });
    const entry = await until('the worker to be listed', async () =>
      (await listed()).find((w) => w.worker_id === 'box-1'),
    );
    expect(entry).toMatchObject({
      worker_id: 'box-1',
      capacity: 2,
      hostname: os.hostname(),
      connected_at: expect.any(String),
      last_heartbeat_at: expect.any(String),
    });

    const done = await until('the run to end', async () => {
      const run = (await api('GET', `/agent/runs/${runId}`)).body;
      return ['SUCCEEDED', 'FAILED', 'ERROR'].includes(run.state as string) ? run : undefined;
    });
    expect(done.state).toBe('SUCCEEDED');
    expect(done.is_run_type_cancellable).toBe(false);
    const conversation = await api('GET', `/agent/runs/${runId}/conversation`);
    expect(JSON.stringify(conversation.body)).toContain('hello from the worker');
    expect(worker.exitCode).toBeNull();
  });

  it('a self-hosted worker runs a built-in CLI harness: its own model proxy gets the team key over the worker endpoint', async () => {
    const key = `sk-worker-e2e-${randomUUID()}`;
    expect((await api('PUT', '/secrets/ANTHROPIC_API_KEY', { value: key })).status).toBe(200);
    const worker = startWorker({
      CONVEYOR_WORKER_TOKEN: token,
      WORKER_ID: 'box-cli',
      ANTHROPIC_BASE_URL: modelServer.url,
    });
    modelServer.enqueue({ text: 'Answered on the customer box.' });
    const created = await api('POST', '/agent/runs', {
      prompt: 'Say where you run',
      config: { worker_host: 'box-cli', harness: { type: 'claude' } },
    });
    expect(created.status).toBe(200);
    const runId = created.body.run_id as string;
    const done = await until(
      'the CLI run to end',
      async () => {
        const run = (await api('GET', `/agent/runs/${runId}`)).body;
        return ['SUCCEEDED', 'FAILED', 'ERROR'].includes(run.state as string) ? run : undefined;
      },
      120_000,
    );
    expect(done).toMatchObject({
      state: 'SUCCEEDED',
      status_message: { message: 'Answered on the customer box.' },
    });
    // Claude Code reached the model through the worker's proxy, which put the team's key on the request.
    const turns = modelServer.requests.filter((r) => r.scripted);
    expect(turns.length).toBeGreaterThan(0);
    for (const turn of turns) expect(turn.apiKey).toBe(key);
    expect(workerLogs).not.toContain(key);
    worker.kill('SIGKILL');
  }, 180_000);

  it('cancel of a self-hosted run answers 422 operation_not_supported; the worker finishes it', async () => {
    const created = await api('POST', '/agent/runs', {
      prompt: '@demo sleep 1500\n@demo message slept',
      config: { worker_host: 'box-1' },
    });
    const runId = created.body.run_id as string;
    await until('the run to start', async () =>
      ['CLAIMED', 'PENDING', 'INPROGRESS'].includes(
        (await api('GET', `/agent/runs/${runId}`)).body.state as string,
      )
        ? true
        : undefined,
    );
    const cancel = await api('POST', `/agent/runs/${runId}/cancel`);
    expect(cancel.status).toBe(422);
    expect(cancel.body).toMatchObject({
      status: 422,
      type: expect.stringMatching(/operation_not_supported$/),
    });
    await until('the run to succeed', async () =>
      (await api('GET', `/agent/runs/${runId}`)).body.state === 'SUCCEEDED' ? true : undefined,
    );
  });

  it('a killed worker drops off the list within the documented bound', async () => {
    const worker = workers[0]!;
    worker.kill('SIGKILL');
    const killedAt = Date.now();
    await until(
      'the worker to disappear',
      async () => ((await listed()).some((w) => w.worker_id === 'box-1') ? undefined : true),
      STALE_AFTER_MS + 10_000,
    );
    expect(Date.now() - killedAt).toBeLessThan(STALE_AFTER_MS + 5000);
  });

  it('a silent worker (frozen, connection still open) drops off after WORKER_STALE_AFTER_MS and returns with its heartbeats', async () => {
    const frozen = startWorker({ CONVEYOR_WORKER_TOKEN: token, WORKER_ID: 'box-3' });
    await until('the worker to be listed', async () =>
      (await listed()).some((w) => w.worker_id === 'box-3') ? true : undefined,
    );
    frozen.kill('SIGSTOP');
    const frozenAt = Date.now();
    await until(
      'the silent worker to go stale',
      async () => ((await listed()).some((w) => w.worker_id === 'box-3') ? undefined : true),
      STALE_AFTER_MS + 10_000,
    );
    const elapsed = Date.now() - frozenAt;
    // Its last heartbeat was at most one interval (1 s here) before the freeze.
    expect(elapsed).toBeGreaterThanOrEqual(STALE_AFTER_MS - 1500);
    expect(elapsed).toBeLessThan(STALE_AFTER_MS + 3000);
    frozen.kill('SIGCONT');
    await until('the worker to be listed again', async () =>
      (await listed()).some((w) => w.worker_id === 'box-3') ? true : undefined,
    );
    frozen.kill('SIGKILL');
  });

  it('a worker with a wrong token is refused and exits', async () => {
    const bad = startWorker({
      CONVEYOR_WORKER_TOKEN: `cvw_AAAAAAAAAA_${'x'.repeat(43)}`,
      WORKER_ID: 'box-2',
    });
    const code = await new Promise<number | null>((resolve) => bad.once('exit', (c) => resolve(c)));
    expect(code).toBe(1);
    expect(await listed()).toEqual([]);
  });

  it('a worker started as root on bubblewrap runs a run to SUCCEEDED as the runner account; only its helper is root', async () => {
    expect(process.getuid?.()).toBe(0);
    const worker = startSandboxedWorker('box-bwrap');
    await until('the sandboxed worker to be listed', async () =>
      (await listed()).some((w) => w.worker_id === 'box-bwrap') ? true : undefined,
    );
    const created = await api('POST', '/agent/runs', {
      prompt: '@demo message hello from the sandboxed worker',
      config: { worker_host: 'box-bwrap' },
    });
    expect(created.status).toBe(200);
    const done = await ended(created.body.run_id as string);
    expect(done.state).toBe('SUCCEEDED');

    expect(identity(worker.pid!)).toEqual({ uid: Number(execId('conveyor-runner')), capEff: 0n });
    const helper = helperOf(worker.pid!);
    expect(helper).toBeDefined();
    expect(identity(helper!).capEff).not.toBe(0n);
    worker.kill('SIGTERM');
    expect(await new Promise((resolve) => worker.once('exit', resolve))).toBe(0);
  }, 120_000);

  it.each<NodeJS.Signals>(['SIGKILL', 'SIGTERM'])(
    "a worker's next process takes back the Claude Code run its %s-ed process left mid-step; it ends SUCCEEDED",
    async (signal) => {
      const key = `sk-worker-adopt-${randomUUID()}`;
      expect((await api('PUT', '/secrets/ANTHROPIC_API_KEY', { value: key })).status).toBe(200);
      // The same machine as the worker's next process sees it: its workspaces and its sandboxes' state.
      const workspaceRoot = path.join(os.tmpdir(), `worker-adopt-${randomUUID()}`);
      const env = {
        WORKSPACE_ROOT: workspaceRoot,
        SANDBOX_STATE_DIR: `${workspaceRoot}-state`,
        ANTHROPIC_BASE_URL: modelServer.url,
      };
      const workerId = `box-adopt-${signal.toLowerCase()}`;
      const first = startSandboxedWorker(workerId, env);
      const nonce = randomUUID().slice(0, 8);
      const command = `while [ ! -e /workspace/release-${nonce} ]; do sleep 0.1; done; echo "$((6 * 7))-${nonce}"`;
      modelServer.enqueue(
        { toolCalls: [{ name: 'Bash', input: { command, description: 'Wait for the release' } }] },
        { text: `Released ${nonce}.` },
      );
      const created = await api('POST', '/agent/runs', {
        prompt: `Wait for release ${nonce}`,
        config: { worker_host: workerId, harness: { type: 'claude' } },
      });
      expect(created.status).toBe(200);
      const runId = created.body.run_id as string;
      await until(
        'the tool step to run',
        async () => ((await processesMatching(`release-${nonce}`)).length > 0 ? true : undefined),
        120_000,
      );
      const step = Math.min(...(await processesMatching(`release-${nonce}`)));

      const exited = new Promise((resolve) => first.once('exit', resolve));
      first.kill(signal);
      await exited;
      startSandboxedWorker(workerId, env);
      await until('the next worker process to be listed', async () =>
        (await listed()).filter((w) => w.worker_id === workerId).length > 0 ? true : undefined,
      );
      // The agent never noticed: the step's shell is the very one that ran before.
      expect(await processesMatching(`release-${nonce}`)).toContain(step);
      await writeFile(path.join(workspaceRoot, runId, `release-${nonce}`), '');

      expect(await ended(runId, 120_000)).toMatchObject({
        state: 'SUCCEEDED',
        status_message: { message: `Released ${nonce}.` },
      });
      const turns = modelServer.requests.filter((r) => r.scripted && JSON.stringify(r.body).includes(nonce));
      const output = `${6 * 7}-${nonce}`;
      // The model saw the run's first turn once (nothing started again), then the step's output.
      expect(turns.filter((r) => !JSON.stringify(r.body).includes(output))).toHaveLength(1);
      expect(turns.filter((r) => JSON.stringify(r.body).includes(output))).toHaveLength(1);
      expect(workerLogs).toContain('taking back a run the previous runner process left');
    },
    240_000,
  );

  it('a worker whose privileged helper dies ends the run it held with a clear code and exits non-zero', async () => {
    const worker = startSandboxedWorker('box-helper');
    const exited = new Promise<number | null>((resolve) => worker.once('exit', (code) => resolve(code)));
    await until('the sandboxed worker to be listed', async () =>
      (await listed()).some((w) => w.worker_id === 'box-helper') ? true : undefined,
    );
    const created = await api('POST', '/agent/runs', {
      prompt: '@demo sleep 60000\n@demo message never',
      config: { worker_host: 'box-helper' },
    });
    const runId = created.body.run_id as string;
    await until('the run to start', async () =>
      (await api('GET', `/agent/runs/${runId}`)).body.state === 'INPROGRESS' ? true : undefined,
    );
    process.kill(helperOf(worker.pid!)!, 'SIGKILL');

    expect(await exited).not.toBe(0);
    const done = await ended(runId);
    expect(done).toMatchObject({
      state: 'ERROR',
      status_message: { message: expect.stringMatching(/sandbox helper/) },
    });
    expect(workerLogs).toContain('the privileged sandbox helper is gone');
  }, 120_000);
});
