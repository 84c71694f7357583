import * as grpc from '@grpc/grpc-js';
import {
  callRpc,
  createOrchestratorClients,
  workerCredentials,
  type OrchestratorClients,
  type RunAssignment__Output,
  type WorkerDownstream__Output,
  type WorkerUpstream,
} from '@conveyor/proto';
import { runCli, startPlatform, type RunningPlatform } from '@conveyor/testing';

/**
 * Finding 1 (workers): self-hosted workers were told to connect to the orchestrator's core port. Now they reach
 * only the worker endpoint, and a worker token acts only on its own team's runs (docs/workers.md).
 */
describe('finding 1: self-hosted workers never reach the core and stay within their team', () => {
  let platform: RunningPlatform;
  let ownToken: string;
  let otherToken: string;
  const open: OrchestratorClients[] = [];
  const failure = (p: Promise<unknown>) =>
    p.then(
      () => undefined,
      (err: grpc.ServiceError) => err,
    );

  const endpoint = (token: string, address = platform.workerEndpointAddr): OrchestratorClients => {
    const clients = createOrchestratorClients(address, workerCredentials(platform.trust.caFile, token));
    open.push(clients);
    return clients;
  };

  const createRun = async (workerHost: string, config: Record<string, unknown> = {}): Promise<string> => {
    const res = await fetch(`${platform.apiUrl}/agent/runs`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${platform.apiKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ prompt: '@demo message hi', config: { worker_host: workerHost, ...config } }),
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as { run_id: string }).run_id;
  };

  /** Connects as a worker of the token's team and waits for the run the platform pushes to it. */
  const holdRun = (
    clients: OrchestratorClients,
    token: string,
    workerId: string,
  ): Promise<{
    assignment: RunAssignment__Output;
    runnerId: string;
    call: grpc.ClientDuplexStream<WorkerUpstream, WorkerDownstream__Output>;
  }> =>
    new Promise((resolve, reject) => {
      const call = clients.workers.Connect();
      let runnerId = '';
      call.on('data', (message: WorkerDownstream__Output) => {
        if (message.welcome) {
          runnerId = message.welcome.runner_id;
          call.write({ heartbeat: { active_runs: 0 } });
        }
        if (message.assignment) resolve({ assignment: message.assignment, runnerId, call });
      });
      call.on('error', reject);
      call.write({
        hello: {
          worker_token: token,
          worker_id: workerId,
          hostname: 'security-test',
          version: 'test',
          capacity: 1,
        },
      });
    });

  beforeAll(async () => {
    platform = await startPlatform({
      withRunner: false,
      env: {
        WORKER_HEARTBEAT_INTERVAL_MS: '1000',
        MODELS_CONFIG: JSON.stringify({ models: [{ id: 'claude-sonnet-4-5', provider: 'anthropic' }] }),
      },
    });
    const token = (team: string) =>
      runCli(['worker-token', 'create', '--team', team, '--name', 'security'], platform.env).then(
        (out) => (JSON.parse(out) as { token: string }).token,
      );
    ownToken = await token('team_dev');
    const other = JSON.parse(await runCli(['team', 'create', '--name', 'Intruders'], platform.env)) as {
      id: string;
    };
    otherToken = await token(other.id);
  }, 120_000);

  afterAll(async () => {
    for (const c of open) c.close();
    await platform?.stop();
  });

  it('a worker credential gets nowhere on the core listener (no client certificate, no handshake)', async () => {
    const core = endpoint(ownToken, platform.orchestratorGrpcAddr);
    const err = await failure(
      callRpc(
        core,
        'runner',
        'Heartbeat',
        { run_id: '00000000-0000-4000-8000-000000000000', execution: 1, runner_id: 'x' },
        { deadlineMs: 3000 },
      ),
    );
    expect([grpc.status.UNAVAILABLE, grpc.status.DEADLINE_EXCEEDED]).toContain(err?.code);
  });

  it('the worker endpoint serves no run reading, no Caller-trusting RPC and no claims', async () => {
    const clients = endpoint(ownToken);
    const caller = { team_id: 'team_dev', principal_type: 'USER', principal_id: 'user_dev', role: 'ADMIN' };
    expect((await failure(callRpc(clients, 'runs', 'ListRuns', { caller, limit: 5 } as never)))?.code).toBe(
      grpc.status.UNIMPLEMENTED,
    );
    expect(
      (await failure(callRpc(clients, 'webhookIngress', 'ResolveWebhook', { webhook_uid: 'wh_any' })))?.code,
    ).toBe(grpc.status.UNIMPLEMENTED);
    expect(
      (
        await failure(
          callRpc(clients, 'runner', 'ClaimRun', {
            run_id: '00000000-0000-4000-8000-000000000000',
            execution: 1,
            runner_id: 'x',
          }),
        )
      )?.code,
    ).toBe(grpc.status.UNIMPLEMENTED);
    const noToken = endpoint('not-a-token');
    expect(
      (
        await failure(
          callRpc(noToken, 'runner', 'Heartbeat', {
            run_id: '00000000-0000-4000-8000-000000000000',
            execution: 1,
            runner_id: 'x',
          }),
        )
      )?.code,
    ).toBe(grpc.status.UNAUTHENTICATED);
  });

  it('another team’s worker token cannot heartbeat, report, complete or push a run, even knowing its runner_id', async () => {
    const runId = await createRun('box-owner');
    const own = endpoint(ownToken);
    const { assignment, runnerId, call } = await holdRun(own, ownToken, 'box-owner');
    expect(assignment.run_id).toBe(runId);
    const target = { run_id: runId, execution: assignment.execution, runner_id: runnerId };

    const intruder = endpoint(otherToken);
    for (const err of [
      await failure(callRpc(intruder, 'runner', 'Heartbeat', target)),
      await failure(
        callRpc(intruder, 'runner', 'ReportEvents', {
          ...target,
          events_json: [JSON.stringify({ kind: 'message', role: 'assistant', text: 'injected' })],
        } as never),
      ),
      await failure(
        callRpc(intruder, 'runner', 'CompleteRun', {
          ...target,
          state: 'FAILED',
          message: 'x',
          error_code: 'x',
        } as never),
      ),
      await failure(
        callRpc(intruder, 'runner', 'PushRunBranch', {
          ...target,
          repository: 0,
          base_commit: '0'.repeat(40),
        } as never),
      ),
    ]) {
      expect(err?.code).toBe(grpc.status.NOT_FOUND);
    }
    // The owner's worker reports for its own run through the same endpoint.
    expect(await callRpc(own, 'runner', 'Heartbeat', target)).toMatchObject({ cancel_requested: false });
    call.cancel();
  });

  it('a worker gets the harness credential of its own team’s run it holds, and no other worker does', async () => {
    const key = `sk-worker-credential-${Date.now()}`;
    const put = await fetch(`${platform.apiUrl}/secrets/ANTHROPIC_API_KEY`, {
      method: 'PUT',
      headers: { Authorization: `Bearer ${platform.apiKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ value: key }),
    });
    expect(put.status).toBe(200);
    const runId = await createRun('box-claude', { harness: { type: 'claude' } });
    const own = endpoint(ownToken);
    const { assignment, runnerId, call } = await holdRun(own, ownToken, 'box-claude');
    expect(assignment.run_id).toBe(runId);
    const target = { run_id: runId, execution: assignment.execution, runner_id: runnerId };

    // Another team's worker, even knowing the run and its runner_id, learns nothing about it.
    const intruder = await failure(callRpc(endpoint(otherToken), 'runner', 'GetHarnessCredential', target));
    expect(intruder?.code).toBe(grpc.status.NOT_FOUND);
    expect(JSON.stringify(intruder)).not.toContain(key);
    // A worker of the same team that does not hold the run (another connection's runner_id) is refused too.
    const sameTeam = await failure(
      callRpc(endpoint(ownToken), 'runner', 'GetHarnessCredential', {
        ...target,
        runner_id: 'not-the-holder',
      }),
    );
    expect(sameTeam?.code).toBe(grpc.status.ABORTED);
    expect(JSON.stringify(sameTeam)).not.toContain(key);
    // The worker holding the run gets the key for its model proxy, with the run's model.
    expect(await callRpc(own, 'runner', 'GetHarnessCredential', target)).toMatchObject({
      provider: 'anthropic',
      api_key: key,
      secret_name: 'ANTHROPIC_API_KEY',
      models: ['claude-sonnet-4-5'],
    });
    call.cancel();
  });
});
