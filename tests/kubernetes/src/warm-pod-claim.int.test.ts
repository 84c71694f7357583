import { randomUUID } from 'node:crypto';
import {
  chartDefaultImage,
  startScriptedModelServer,
  type Json,
  type ScriptedModelServer,
} from '@conveyor/testing';
import { cluster, eventually, kubectl, pods, runnerMetrics, setRunner } from './cluster';
import { api, MODEL, otherTeamKey, toolOutputs, waitForState } from './runs';

// Issue 36: a real Claude Code run takes a started Pod from the runner's warm pool (docs/sandbox.md, warm run Pods).
// The overlay keeps no pool (k8s/values/kubernetes-test.yaml: its Pods would hold the node's room the other files'
// runs need), so this file gives the runners one of the default run image for itself and takes it away after.

const RUNNER = 'deployment/conveyor-runner';
const GO = '/workspace/.go';

/**
 * What the agent runs: its Pod's name, then it leaves a marker of its team in the workspace and /tmp and waits for
 * the test to look at its Pod (GO) before it lists both — what a Pod that had served anyone else would show.
 */
const probe = (marker: string) =>
  [
    'echo "pod=$(hostname)"',
    `echo ${marker} > /workspace/${marker} && echo ${marker} > /tmp/${marker}`,
    `while [ ! -e ${GO} ]; do sleep 0.2; done`,
    'echo "files=$(ls -A /workspace /tmp | grep -v -e : -e "^$" -e "^.go$" | sort | tr "\\n" ",")"',
  ].join('; ');

/** The runners' `conveyor_warm_run_pods` hits and misses, read inside each runner Pod and summed. */
async function warmMetrics(): Promise<{ hits: number; misses: number }> {
  const sums = { hits: 0, misses: 0 };
  for (const text of await runnerMetrics())
    for (const [, stat, value] of text.matchAll(/^conveyor_warm_run_pods\{[^}]*stat="(\w+)"[^}]*\} (\d+)/gm))
      if (stat === 'hits' || stat === 'misses') sums[stat] += Number(value);
  return sums;
}

/** Running warm Pods no run has claimed yet. */
const readyWarmPods = async () =>
  (await pods('conveyor.dev/warm-pod=ready')).filter((pod) => pod.phase === 'Running' && !pod.deleting);

describe('a warm run Pod claimed by a real Claude Code run', () => {
  let server: ScriptedModelServer;
  let replicas = 0;

  beforeAll(async () => {
    server = await startScriptedModelServer([], { host: cluster.nodeIp, port: cluster.modelServerPort });
    await setRunner('SANDBOX_K8S_WARM_PODS', `${await chartDefaultImage(kubectl)}=1:1`);
    replicas = Number(await kubectl('get', RUNNER, '-o', 'jsonpath={.spec.replicas}'));
  });
  afterAll(async () => {
    await server?.close();
    await setRunner('SANDBOX_K8S_WARM_PODS', undefined);
  });

  /** A run of a fresh environment without an image (the pool's), by `key`'s team; what its agent and Pod showed. */
  async function warmRun(key: string | undefined, marker: string) {
    expect(
      (await api('PUT', '/secrets/ANTHROPIC_API_KEY', { value: `sk-k8s-provider-${randomUUID()}` }, key))
        .status,
    ).toBe(200);
    const environment = await api('POST', '/agent/environments', { name: `warm ${randomUUID()}` }, key);
    expect(environment.status).toBe(201);
    // Every replica's pool full, so whichever replica claims the run has a warm Pod for it.
    await eventually(
      async () => ((await readyWarmPods()).length >= replicas ? true : undefined),
      'every runner replica to have a warm Pod',
    );
    const ready = (await readyWarmPods()).map((pod) => pod.name);
    server.enqueue(
      {
        text: 'Probing.',
        toolCalls: [{ name: 'Bash', input: { command: probe(marker), description: 'Probe' } }],
      },
      { text: 'Probed.' },
    );
    const created = await api(
      'POST',
      '/agent/runs',
      {
        prompt: 'Probe your Pod',
        config: { environment_id: environment.body.uid, harness: { model_id: MODEL } },
      },
      key,
    );
    expect(created.status).toBe(200);
    const runId = created.body.run_id as string;
    // While the agent waits: the Pod it runs in is one the pool had started, claimed, under the run's own policy.
    const claimed = await eventually(async () => {
      const found = (await pods('conveyor.dev/warm-pod=claimed')).filter(
        (pod) => ready.includes(pod.name) && !pod.deleting,
      );
      return found.length === 1 ? found[0]! : undefined;
    }, 'a warm Pod to be claimed');
    const policy = JSON.parse(await kubectl('get', 'networkpolicy', claimed.name, '-o', 'json')) as Json;
    await kubectl('exec', claimed.name, '--', 'touch', GO);
    const done = await waitForState(runId, ['SUCCEEDED', 'FAILED', 'ERROR'], 240_000, key);
    expect(done).toMatchObject({ state: 'SUCCEEDED', status_message: { message: 'Probed.' } });
    const output = (JSON.parse(await toolOutputs(runId, key)) as Json[])
      .map((step) => String(step.output ?? ''))
      .join('\n');
    const seen: Record<string, string> = Object.fromEntries(
      [...output.matchAll(/^(\w+)=(\S*)$/gm)].map(([, name, value]) => [name, value]),
    );
    return { claimed: claimed.name, policy, seen };
  }

  it("takes a started Pod from the pool (a hit), under the run's NetworkPolicy, never returned; another team's run gets another Pod with none of the first's files", async () => {
    const before = await warmMetrics();
    const ours = await warmRun(undefined, `ours-${randomUUID()}`);
    expect(ours.claimed).toMatch(/^warm-[0-9a-f]{12}$/);
    // The agent ran in that very Pod.
    expect(ours.seen.pod).toBe(ours.claimed);
    // The run's policy, made for the warm Pod at the claim: its only destination the runner Pods' run gateway.
    const spec = ours.policy.spec as Json;
    expect(spec.podSelector).toEqual({ matchLabels: { 'conveyor.dev/run-sandbox': ours.claimed } });
    expect(spec.policyTypes).toEqual(['Ingress', 'Egress']);
    expect(spec.ingress ?? []).toEqual([]);
    const egress = spec.egress as Array<{
      to: Array<{ podSelector: { matchLabels: Record<string, string> } }>;
    }>;
    expect(egress).toHaveLength(1);
    expect(egress[0]!.to).toHaveLength(1);
    expect(egress[0]!.to[0]!.podSelector.matchLabels).toMatchObject({
      'app.kubernetes.io/name': 'conveyor-runner',
    });
    const after = await warmMetrics();
    expect(after.hits - before.hits).toBe(1);
    expect(after.misses - before.misses).toBe(0);
    // Claimed Pods go with their runs, never back to the pool.
    await eventually(
      async () =>
        (await pods('conveyor.dev/warm-pod')).some((p) => p.name === ours.claimed) ? undefined : true,
      'the claimed Pod to be deleted',
    );

    const key = await otherTeamKey('Warm');
    const theirMarker = `theirs-${randomUUID()}`;
    const theirs = await warmRun(key, theirMarker);
    expect(theirs.claimed).not.toBe(ours.claimed);
    expect(theirs.seen.pod).toBe(theirs.claimed);
    // Its workspace and /tmp hold its own marker and nothing of the first team's run.
    const files = (theirs.seen.files ?? '').split(',').filter((name) => name !== '');
    expect(files).toContain(theirMarker);
    expect(files.filter((name) => name.startsWith('ours-'))).toEqual([]);
  });
});
