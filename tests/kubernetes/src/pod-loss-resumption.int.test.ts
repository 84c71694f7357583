import { randomUUID } from 'node:crypto';
import { longCommand, startScriptedModelServer, type ScriptedModelServer } from '@conveyor/testing';
import { CLAIM_ROOT, cluster, eventually, kubectl, onClaim, runPods, turnCheckpoint } from './cluster';
import { api, MODEL, otherTeamKey, RUN_IMAGE, timeline, toolOutputs, waitForState } from './runs';

// Issue 33 on the Kubernetes backend (docs/sandbox.md "Container backend: Kubernetes"): the runner checkpoints a run's
// workspace (its CLI session included) after every model turn onto the claim its replicas share; when the run's Pod
// is deleted mid-step, the run goes on in a new Pod that mounts that checkpoint alone, read-only, and Claude Code
// resumes its session there. Another team's run Pod sees none of it.

/** The tool step the Pod is deleted in: it would outlast the test. */
const STEP_SECONDS = 600;
/** The workspace the checkpoint carries (the 100 MB), written by the environment's setup. */
const WORKSPACE_MB = 100;
/** What a run Pod mounts of the claim: the sub-paths of its volume mounts. */
async function claimMounts(pod: string): Promise<string[]> {
  const spec = JSON.parse(await kubectl('get', 'pod', pod, '-o', 'json')) as {
    spec: { containers: Array<{ volumeMounts?: Array<{ subPath?: string }> }> };
  };
  return spec.spec.containers.flatMap((c) =>
    (c.volumeMounts ?? []).flatMap((m) => (m.subPath ? [m.subPath] : [])),
  );
}

describe('a run whose Pod is lost goes on from its last turn in a new Pod', () => {
  let server: ScriptedModelServer;

  beforeAll(async () => {
    server = await startScriptedModelServer([], { host: cluster.nodeIp, port: cluster.modelServerPort });
    await kubectl('rollout', 'status', 'deployment/conveyor-runner', '--timeout=300s');
  });
  afterAll(async () => {
    await server?.close();
  });

  /** An environment of the run's image; `blob`: its setup writes the workspace the checkpoint carries. */
  const newEnvironment = async (blob: boolean, key?: string) => {
    const created = await api(
      'POST',
      '/agent/environments',
      {
        name: `resumption ${randomUUID()}`,
        docker_image: RUN_IMAGE,
        ...(blob ? { setup_commands: [`head -c ${WORKSPACE_MB * 1_000_000} /dev/urandom > blob.bin`] } : {}),
      },
      key,
    );
    expect(created.status).toBe(201);
    return created.body.uid as string;
  };

  it("the Pod deleted mid-step: SUCCEEDED with the model's answer to the resumption, its first turn seen once, one agent_lost; another team's Pod mounts none of it", async () => {
    const nonce = randomUUID().slice(0, 8);
    expect(
      (await api('PUT', '/secrets/ANTHROPIC_API_KEY', { value: `sk-k8s-provider-${randomUUID()}` })).status,
    ).toBe(200);
    // Claude Code's Bash tool gives up on a command after 2 minutes unless the call names a longer timeout (ms).
    server.enqueue({
      toolCalls: [
        {
          name: 'Bash',
          input: { command: longCommand(STEP_SECONDS), description: `Wait ${nonce}`, timeout: 900_000 },
        },
      ],
    });
    const created = await api('POST', '/agent/runs', {
      prompt: `Wait while your Pod goes away (${nonce})`,
      config: { environment_id: await newEnvironment(true), harness: { model_id: MODEL } },
    });
    expect(created.status).toBe(200);
    const runId = created.body.run_id as string;
    const mine = (r: (typeof server.requests)[number]) =>
      r.scripted && JSON.stringify(r.body).includes(nonce);
    const firstTurn = await eventually(
      async () => server.requests.find(mine),
      'the agent to start its step',
      600_000,
    );
    // The checkpoint of turn 1 (the step requested) is on the claim, in the run's own directory.
    const checkpoint = await eventually(
      () => turnCheckpoint(runId),
      'the first turn to be checkpointed on the claim',
      120_000,
    );
    expect(checkpoint.bytes).toBeGreaterThan(WORKSPACE_MB * 1_000_000);
    const [pod] = (await runPods(runId)).filter((p) => p.phase === 'Running' && !p.deleting);

    // Another team's run, while this run's checkpoint exists: its Pod mounts no checkpoint, and sees none.
    const key = await otherTeamKey('Resumption');
    expect(
      (await api('PUT', '/secrets/ANTHROPIC_API_KEY', { value: `sk-k8s-provider-${randomUUID()}` }, key))
        .status,
    ).toBe(200);
    const look = `test -e /checkpoint.tar && echo checkpoint=present || echo checkpoint=absent; grep -c checkpoints /proc/self/mountinfo || true; ls ${CLAIM_ROOT} 2>&1 | head -1`;
    server.enqueue(
      { toolCalls: [{ name: 'Bash', input: { command: look, description: 'Look' } }] },
      { text: 'Looked.' },
    );
    const theirs = await api(
      'POST',
      '/agent/runs',
      {
        prompt: 'Look around',
        config: { environment_id: await newEnvironment(false, key), harness: { model_id: MODEL } },
      },
      key,
    );
    expect(theirs.status).toBe(200);
    const theirId = theirs.body.run_id as string;
    const theirPod = await eventually(
      async () => (await runPods(theirId)).find((p) => p.phase === 'Running'),
      "the other team's Pod",
      600_000,
    );
    expect((await claimMounts(theirPod.name)).filter((p) => p.includes('.checkpoints'))).toEqual([]);
    expect(await waitForState(theirId, ['SUCCEEDED', 'FAILED', 'ERROR'], 600_000, key)).toMatchObject({
      state: 'SUCCEEDED',
    });
    const seen = await toolOutputs(theirId, key);
    expect(seen).toContain('checkpoint=absent');
    expect(seen).not.toContain(runId);

    // The run's Pod goes mid-step: the run goes on in a new Pod from the checkpoint.
    server.enqueue({ text: `Resumed ${nonce}.` });
    const lostAt = Date.now();
    await kubectl('delete', 'pod', pod!.name, '--grace-period=1', '--wait=false');
    const resumedTurn = await eventually(
      async () =>
        server.requests.find((r) => mine(r) && JSON.stringify(r.body).includes('environment was lost')),
      'the resumed agent to ask the model',
      600_000,
    );
    const newPod = (await runPods(runId)).find((p) => p.name !== pod!.name);
    if (newPod) expect(await claimMounts(newPod.name)).toEqual([`.checkpoints/${runId}/workspace.tar`]);

    const ended = await waitForState(runId, ['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'], 600_000);
    expect(ended).toMatchObject({ state: 'SUCCEEDED', status_message: { message: `Resumed ${nonce}.` } });
    const turns = server.requests.filter(mine);
    expect(turns.filter((r) => !JSON.stringify(r.body).includes('environment was lost'))).toHaveLength(1);
    const lost = (await timeline(runId)).filter((e) => e.kind === 'agent_lost').map((e) => e.data);
    expect(lost).toEqual([expect.objectContaining({ resumed: true, turn: 1, resumption: 1 })]);
    expect(String(lost[0]!.text)).toBe("Resumed after the run's Pod was deleted at turn 1");
    // The checkpoint goes with the run.
    await eventually(
      async () => ((await onClaim(`.checkpoints/${runId}/checkpoint.json`)) === undefined ? true : undefined),
      'the checkpoint to be deleted',
    );

    // Measured (docs/sandbox.md, docs/run-lifecycle.md): the copy of turn 1 after the model asked for the step, its
    // size, and the time from the Pod's deletion to the agent asking the model again.
    process.stdout.write(
      `${JSON.stringify({
        checkpointMs: checkpoint.takenAt - firstTurn.receivedAt,
        checkpointBytes: checkpoint.bytes,
        lossToStreamingMs: resumedTurn.receivedAt - lostAt,
      })}\n`,
    );
  }, 900_000);
});
