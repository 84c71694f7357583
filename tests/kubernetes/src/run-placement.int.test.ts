import { randomUUID } from 'node:crypto';
import { startScriptedModelServer, type ScriptedModelServer } from '@conveyor/testing';
import { cluster, kubectl, setRunner } from './cluster';
import { api, runInNewEnvironment, timeline, waitForState } from './runs';

// Issue 36: run Pods go where the operator says (SANDBOX_K8S_NODE_SELECTOR; the chart's runner.sandbox.nodeSelector).
// A selector no node matches is the scheduler's to explain: the run's timeline and its end say why, after
// SANDBOX_K8S_UNSCHEDULABLE_TIMEOUT_MS (15 s in k8s/values/kubernetes-test.yaml), and once a node carries the label
// the next run runs there.

const LABEL = 'conveyor.dev/test-runs';

describe("run Pods placed by the operator's nodeSelector", () => {
  let server: ScriptedModelServer;
  let node = '';

  beforeAll(async () => {
    server = await startScriptedModelServer([], { host: cluster.nodeIp, port: cluster.modelServerPort });
    node = await kubectl('get', 'nodes', '-o', 'jsonpath={.items[0].metadata.name}');
    await kubectl('label', 'node', node, `${LABEL}-`);
    await setRunner('SANDBOX_K8S_NODE_SELECTOR', JSON.stringify({ [LABEL]: 'here' }));
    const key = `sk-k8s-provider-${randomUUID()}`;
    expect((await api('PUT', '/secrets/ANTHROPIC_API_KEY', { value: key })).status).toBe(200);
  });
  afterAll(async () => {
    await server?.close();
    await kubectl('label', 'node', node, `${LABEL}-`).catch(() => '');
    await setRunner('SANDBOX_K8S_NODE_SELECTOR', undefined);
  });

  async function run(name: string) {
    const runId = await runInNewEnvironment(`${name} ${randomUUID()}`, 'Where am I?');
    return { runId, end: await waitForState(runId, ['ERROR', 'FAILED', 'SUCCEEDED', 'CANCELLED'], 240_000) };
  }

  it("says the scheduler's reason while no node has the label, then runs on the node once it does", async () => {
    const unplaced = await run('unplaced');
    expect(unplaced.end).toMatchObject({
      state: 'ERROR',
      status_message: {
        error_code: 'resource_unavailable',
        message: expect.stringContaining("no node could run the run's pod for 15 s") as unknown,
      },
    });
    expect((unplaced.end.status_message as { message: string }).message).toContain('node affinity/selector');
    const waiting = (
      (await timeline(unplaced.runId)) as Array<{ kind: string; data: { detail?: string } }>
    ).filter((e) => e.kind === 'setup_step' && e.data.detail?.includes('waiting for a node'));
    expect(waiting).toHaveLength(1);
    expect(waiting[0]!.data.detail).toContain('node affinity/selector');

    await kubectl('label', 'node', node, `${LABEL}=here`);
    server.enqueue({ text: 'Placed.' });
    const placed = await run('placed');
    expect(placed.end).toMatchObject({ state: 'SUCCEEDED', status_message: { message: 'Placed.' } });
  });
});
