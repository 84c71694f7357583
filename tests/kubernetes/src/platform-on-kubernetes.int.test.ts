import { randomUUID } from 'node:crypto';
import {
  longCommand,
  longCommandScript,
  startScriptedModelServer,
  type Json,
  type ScriptedModelServer,
} from '@conveyor/testing';
import { cluster, eventually, firstLoggedAt, kubectl, pods, runPods } from './cluster';
import { api, MODEL, nextEventAt, RUN_IMAGE, timeline, toolOutputs, waitForState } from './runs';

// The platform as installed from k8s/chart (k8s/values/kubernetes-test.yaml) on the single-node cluster of
// scripts/kubernetes/: every run is a Pod made by the runner's kubernetes backend, and the real Claude Code CLI runs
// inside it against the scripted model server on the host (the runner's model proxy forwards to it).
// scripts/kubernetes/test.sh sets the cluster up.

/** Where the second run's Pod listens, for the probe of another run's Pod. */
const LISTENER_PORT = 8099;

/** Exits 0 only if a TCP connection to host:port opens: the same connect in the run's Pod and at its controls. */
const connectCommand = (hostPort: string) => {
  const [host, port] = hostPort.split(':');
  return `timeout 5 bash -c 'exec 3<>/dev/tcp/${host}/${port}' 2>/dev/null`;
};

/** Connects from inside the run's Pod: `name=open` or `name=refused` for each target, one per line. */
function probeScript(targets: Record<string, string>): string {
  const connect = Object.entries(targets).map(
    ([name, hostPort]) => `(${connectCommand(hostPort)} && echo ${name}=open || echo ${name}=refused) &`,
  );
  return [
    'echo image=$(cat /etc/conveyor-image 2>/dev/null || echo default)',
    'echo uid=$(id -u)',
    // The run's own CONVEYOR_RUN_ID, CONVEYOR_API_KEY (run-scoped) and friends are expected; the platform's are not.
    'echo platform_env=$(env | grep -cE "^(DATABASE_URL|REDIS_URL|KAFKA_|GRPC_TLS_|KUBERNETES_|CONVEYOR_SECRETS_KEY|BLOB_SIGNING_SECRET|ORCHESTRATOR_ADDR|SANDBOX_)")',
    'test -e /var/run/secrets/kubernetes.io/serviceaccount/token && echo token=present || echo token=absent',
    '(touch /probe-root 2>/dev/null && echo rootfs=writable) || echo rootfs=readonly',
    ...connect,
    // The runners' run gateway (its Service), which the run's NetworkPolicy allows; the proxy URL carries the run's key.
    'hp=${HTTPS_PROXY##*@}',
    `(timeout 5 bash -c "exec 3<>/dev/tcp/\${hp%:*}/\${hp##*:}" 2>/dev/null && echo egress_proxy=open || echo egress_proxy=refused) &`,
    'wait',
  ].join('\n');
}

/** Cancels a run; cancel takes no body and answers the run ID as plain text (contract §2.10). */
const cancel = async (runId: string): Promise<{ status: number; body: string }> => {
  const cancelled = await fetch(`${cluster.apiUrl}/agent/runs/${runId}/cancel`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${cluster.apiKey}` },
  });
  return { status: cancelled.status, body: await cancelled.text() };
};

describe('the platform on Kubernetes: runs execute as Pods', () => {
  let server: ScriptedModelServer;
  let environmentId: string;

  beforeAll(async () => {
    server = await startScriptedModelServer([], { host: cluster.nodeIp, port: cluster.modelServerPort });
    const key = `sk-k8s-provider-${randomUUID()}`;
    expect((await api('PUT', '/secrets/ANTHROPIC_API_KEY', { value: key })).status).toBe(200);
    const environment = await api('POST', '/agent/environments', {
      name: 'kubernetes probes',
      docker_image: RUN_IMAGE,
    });
    expect(environment.status).toBe(201);
    environmentId = environment.body.uid as string;
  });
  afterAll(async () => {
    await server?.close();
  });

  const createRun = async (prompt: string): Promise<string> => {
    const created = await api('POST', '/agent/runs', {
      prompt,
      config: { environment_id: environmentId, harness: { model_id: MODEL } },
    });
    expect(created.status).toBe(200);
    return created.body.run_id as string;
  };

  /** Resolves once the agent has taken the next scripted turn (its long command then runs in the Pod). */
  const turnTaken = () => {
    const before = server.requests.filter((r) => r.scripted).length;
    return eventually(
      async () => (server.requests.filter((r) => r.scripted).length > before ? true : undefined),
      'the agent to take its turn',
    );
  };

  /** Resolves once host:port accepts a connection from inside `pod` (the same connect as the probe's). */
  const reachableFrom = (pod: string, hostPort: string) =>
    eventually(
      () =>
        kubectl('exec', pod, '--', 'bash', '-c', connectCommand(hostPort)).then(
          () => true,
          () => undefined,
        ),
      `${hostPort} to accept a connection from ${pod}`,
      60_000,
    );

  it("a claude run succeeds in its own Pod from the environment's docker_image, which cannot reach the platform or another run's Pod", async () => {
    // Another run whose Pod listens on a port (its Bash step: a TCP server, kept until that run is cancelled).
    server.enqueue({
      toolCalls: [
        {
          name: 'Bash',
          input: {
            // The server in the background, the step held by the long command cancel ends (Claude Code does not
            // wait on a bare server: it returned at once and the run ended before the probe).
            command: `(node -e "require('net').createServer((s) => s.end('pong')).listen(${LISTENER_PORT})" &); ${longCommand(600)}`,
            description: 'Listen',
          },
        },
      ],
    });
    const listenerTaken = turnTaken();
    const listenerRunId = await createRun('Listen on a port');
    const listenerPod = await eventually(
      async () => (await runPods(listenerRunId)).find((p) => p.phase === 'Running' && p.ip),
      "the listening run's Pod",
    );
    await listenerTaken;

    // Each target with a control: a position no run's NetworkPolicy covers connects to the same address with the same
    // connect, so the run Pod's refusals below are the policy's, not a server that is down or a wrong address. The
    // runner's Pod (same namespace, egress unrestricted, a client the orchestrator's own ingress policy admits); for
    // the other run, its own Pod at its own address (traffic to itself crosses no policy).
    const orchestrator = (await pods('app.kubernetes.io/name=conveyor-orchestrator'))[0]!;
    const runner = (await pods('app.kubernetes.io/name=conveyor-runner'))[0]!;
    const targets: Record<string, { address: string; control: string }> = {
      orchestrator_grpc: { address: `${orchestrator.ip}:50051`, control: runner.name },
      // Open to every Pod by the platform's policies (self-hosted workers): only the run's egress rule refuses it.
      orchestrator_workers: { address: `${orchestrator.ip}:50052`, control: runner.name },
      postgres: { address: cluster.infra.postgres, control: runner.name },
      redis: { address: cluster.infra.redis, control: runner.name },
      kafka: { address: cluster.infra.kafka, control: runner.name },
      kubernetes_api: { address: `${cluster.nodeIp}:16443`, control: runner.name },
      // The runner's own port beside the run gateway (health and metrics): its own Pod reaches it crossing no policy.
      runner_http: { address: `${runner.ip}:8082`, control: runner.name },
      other_run: { address: `${listenerPod.ip}:${LISTENER_PORT}`, control: listenerPod.name },
    };
    for (const { address, control } of Object.values(targets)) await reachableFrom(control, address);

    const probe = probeScript(
      Object.fromEntries(Object.entries(targets).map(([name, { address }]) => [name, address])),
    );
    server.enqueue(
      { text: 'Probing.', toolCalls: [{ name: 'Bash', input: { command: probe, description: 'Probe' } }] },
      { text: 'Probed.' },
    );
    const runId = await createRun('Probe your sandbox');
    const pod = await eventually(async () => (await runPods(runId))[0], 'the run Pod');
    expect(pod.image).toBe(RUN_IMAGE);

    const done = await waitForState(runId, ['SUCCEEDED', 'FAILED', 'ERROR']);
    expect(done).toMatchObject({ state: 'SUCCEEDED', status_message: { message: 'Probed.' } });
    const outputs = await toolOutputs(runId);
    expect(outputs).toContain('"name":"Bash"');
    for (const line of [
      'image=conveyor-run-alt',
      'uid=65534',
      'platform_env=0',
      'token=absent',
      'rootfs=readonly',
    ])
      expect(outputs).toContain(line);
    const probed = (JSON.parse(outputs) as Json[]).map((step) => String(step.output ?? '')).join('\n');
    const connections = Object.fromEntries(
      [...probed.matchAll(/^(\w+)=(open|refused)$/gm)].map(([, name, result]) => [name, result]),
    );
    expect(connections).toEqual({
      ...Object.fromEntries(Object.keys(targets).map((name) => [name, 'refused'])),
      // What its NetworkPolicy allows (the runners' run gateway) does connect from the same Pod.
      egress_proxy: 'open',
    });
    // The Pod and its NetworkPolicy go with the run.
    await eventually(async () => ((await runPods(runId)).length === 0 ? true : undefined), 'the Pod to go');

    expect(await cancel(listenerRunId)).toEqual({ status: 200, body: listenerRunId });
    await waitForState(listenerRunId, ['CANCELLED']);
  });

  it('cancel deletes the Pod', async () => {
    // Only the long command: the cancelled CLI never asks for another turn.
    server.enqueue(...longCommandScript('claude', 600).slice(0, 1));
    const taken = turnTaken();
    const runId = await createRun('Wait for a long time');
    await eventually(async () => (await runPods(runId)).find((p) => p.phase === 'Running'), 'a running Pod');
    await taken;
    expect(await cancel(runId)).toEqual({ status: 200, body: runId });
    await waitForState(runId, ['CANCELLED']);
    await eventually(async () => ((await runPods(runId)).length === 0 ? true : undefined), 'the Pod to go');
  });

  it('a webhook delivery through the ingress Service starts a run that executes as a Pod', async () => {
    const factory = await api('POST', '/factories', { name: `k8s-${Date.now()}` });
    expect(factory.status).toBe(201);
    const factoryId = factory.body.factory_id as string;
    const hook = await api('POST', `/factories/${factoryId}/webhooks`, { name: 'k8s hook' });
    expect(hook.status).toBe(201);
    const automation = await api('POST', `/factories/${factoryId}/automations`, {
      name: 'k8s triage',
      prompt: 'Triage the payload.',
      agent_config: { environment_id: environmentId, model_id: MODEL },
      trigger: { provider: 'webhook', event: 'received', filter: { webhook_ids: [hook.body.webhook_uid] } },
    });
    expect(automation.status).toBe(201);
    server.enqueue({ text: 'Triaged.' });
    // The ingress URL names the in-cluster host; the suite reaches the same path through the Service's address.
    const path = new URL(hook.body.ingress_url as string).pathname;
    const delivered = await fetch(`${cluster.ingressUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${hook.body.secret as string}` },
      body: JSON.stringify({ action: 'opened' }),
    });
    expect(delivered.status).toBe(202);
    const runId = await eventually(async () => {
      const log = await api(
        'GET',
        `/factories/${factoryId}/webhooks/${hook.body.webhook_uid as string}/deliveries`,
      );
      const runIds = ((log.body.deliveries as Json[] | undefined) ?? []).flatMap(
        (d) => d.run_ids as string[],
      );
      return runIds[0];
    }, 'the delivery to start a run');
    await eventually(async () => (await runPods(runId))[0], 'the webhook run Pod');
    const done = await waitForState(runId, ['SUCCEEDED', 'FAILED', 'ERROR']);
    expect(done).toMatchObject({ state: 'SUCCEEDED', status_message: { message: 'Triaged.' } });
  });

  // Last: whether the lost execution is requeued or ends, the turn it did not take stays in the script.
  it('a runner Pod force-deleted mid-step: another replica adopts the run, whose agent in its own Pod ends it SUCCEEDED, its first turn seen once', async () => {
    // The step outlasts the lease's expiry (RUNNER_LOST_AFTER_MS / 2) and the replicas' adoption poll, so the agent's
    // next model request goes through the adopter's gateway.
    server.enqueue(...longCommandScript('claude', 90));
    const scriptedBefore = server.requests.filter((r) => r.scripted).length;
    const taken = turnTaken();
    const runId = await createRun('Wait while your runner goes away');
    const pod = await eventually(
      async () => (await runPods(runId)).find((p) => p.phase === 'Running'),
      'a running Pod',
    );
    await taken;
    // The replica running it is the one whose log names the run: its Pod owns nothing (docs/sandbox.md).
    const runners = await pods('app.kubernetes.io/name=conveyor-runner');
    const holders: string[] = [];
    for (const runner of runners)
      if ((await kubectl('logs', runner.name)).includes(runId)) holders.push(runner.name);
    expect(holders).toHaveLength(1);
    const seen = (await timeline(runId)).length;
    const lostAt = Date.now();
    await kubectl('delete', 'pod', holders[0]!, '--grace-period=0', '--force', '--wait=false');
    const nextEvent = nextEventAt(runId, seen);

    const ended = await waitForState(runId, ['SUCCEEDED', 'ERROR', 'FAILED']);
    expect(ended.state).toBe('SUCCEEDED');
    // Measured (docs/sandbox.md): from the force-deletion to the adopter's first log line naming the run (it took
    // the run and reads on), and to the run's next event (the step's output, which comes when the step ends).
    const adoptedAt = (
      await Promise.all(
        (await pods('app.kubernetes.io/name=conveyor-runner'))
          .filter((runner) => runner.name !== holders[0])
          .map((runner) => firstLoggedAt(runner.name, runId, lostAt)),
      )
    ).filter((at): at is number => at !== undefined);
    process.stdout.write(
      `${JSON.stringify({
        runnerLossToAdoptedMs: Math.min(...adoptedAt) - lostAt,
        runnerLossToNextEventMs: (await nextEvent) - lostAt,
      })}\n`,
    );
    // Adopted, not started again: one execution, and the model saw the run's first turn and its answer only.
    const conversation = (await api('GET', `/agent/runs/${runId}/conversation`)).body as {
      messages: Array<{ execution: number }>;
    };
    expect(Math.max(...conversation.messages.map((m) => m.execution))).toBe(1);
    expect(server.requests.filter((r) => r.scripted).length - scriptedBefore).toBe(2);
    await eventually(
      async () => ((await runPods(runId)).some((p) => p.name === pod.name) ? undefined : true),
      'the run Pod to go once the run ended',
    );
    await kubectl('rollout', 'status', 'deployment/conveyor-runner', '--timeout=300s');
  });
});
