import { randomUUID } from 'node:crypto';
import { cluster, eventually, kubectl, pods } from './cluster';
import { api, runInNewEnvironment, waitForState } from './runs';

// Issue 36: a run whose Pod no node can take says so on its timeline (the scheduler's own reason) and ends ERROR
// resource_unavailable after SANDBOX_K8S_UNSCHEDULABLE_TIMEOUT_MS (k8s/values/kubernetes-test.yaml: 15 s), instead of waiting the
// whole start timeout in silence. The node is filled by a Pod requesting all of its CPU that no other Pod requests, so
// a run's Pod (SANDBOX_K8S_CPU, 500m) fits nowhere — as on a cluster whose nodes are all busy.

const HOG = 'conveyor-test-cpu-hog';

/** Millicores of a Kubernetes CPU quantity (`2`, `500m`, `1.5`). */
const millicores = (quantity: string): number =>
  quantity.endsWith('m') ? Number(quantity.slice(0, -1)) : Math.round(Number(quantity) * 1000);

/** The node's allocatable CPU less what every Pod on it (in every namespace) requests. */
async function freeMillicores(): Promise<number> {
  const node = JSON.parse(await kubectl('get', 'nodes', '-o', 'json')) as {
    items: Array<{ status: { allocatable: { cpu: string } } }>;
  };
  const all = JSON.parse(
    await kubectl(
      'get',
      'pods',
      '--all-namespaces',
      '--field-selector=status.phase!=Succeeded,status.phase!=Failed',
      '-o',
      'json',
    ),
  ) as { items: Array<{ spec: { containers: Array<{ resources?: { requests?: { cpu?: string } } }> } }> };
  const requested = all.items
    .flatMap((pod) => pod.spec.containers)
    .reduce((sum, c) => sum + millicores(c.resources?.requests?.cpu ?? '0'), 0);
  return millicores(node.items[0]!.status.allocatable.cpu) - requested;
}

/** A Pod that only sleeps, requesting `cpu` millicores: what keeps the node full. */
const hogPod = (cpu: number) =>
  JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: HOG, namespace: cluster.namespace },
    spec: {
      restartPolicy: 'Never',
      automountServiceAccountToken: false,
      securityContext: { runAsNonRoot: true, runAsUser: 65534, seccompProfile: { type: 'RuntimeDefault' } },
      containers: [
        {
          name: 'hog',
          image: 'conveyor/run:k8s-test',
          command: ['sleep', '3600'],
          securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
          resources: {
            requests: { cpu: `${cpu}m`, memory: '16Mi' },
            limits: { cpu: `${cpu}m`, memory: '16Mi' },
          },
        },
      ],
    },
  });

describe('a run whose Pod no node can take', () => {
  beforeAll(async () => {
    // The run needs the team's model key to get as far as its Pod.
    const key = `sk-k8s-provider-${randomUUID()}`;
    expect((await api('PUT', '/secrets/ANTHROPIC_API_KEY', { value: key })).status).toBe(200);
  });
  afterAll(async () => {
    await kubectl('delete', 'pod', HOG, '--ignore-not-found', '--grace-period=0', '--force').catch(() => '');
  });

  it("puts the scheduler's reason on its timeline and ends ERROR resource_unavailable", async () => {
    // Earlier files' run Pods must be gone, or one ending would free the CPU this test takes.
    await eventually(
      async () => ((await pods('conveyor.dev/run-sandbox')).length === 0 ? true : undefined),
      'earlier run Pods to be deleted',
    );
    const free = await freeMillicores();
    expect(free).toBeGreaterThan(0);
    // kubectl run with the whole Pod as its overrides: the hog runs as the namespace's restricted policy demands.
    await kubectl(
      'run',
      HOG,
      '--image=conveyor/run:k8s-test',
      '--restart=Never',
      `--overrides=${hogPod(free)}`,
    );
    await eventually(
      async () =>
        (await kubectl('get', 'pod', HOG, '-o', 'jsonpath={.status.phase}')) === 'Running' ? true : undefined,
      'the CPU hog to run',
    );

    const runId = await runInNewEnvironment('unschedulable', 'Never starts');

    const run = await waitForState(runId, ['ERROR', 'FAILED', 'SUCCEEDED', 'CANCELLED']);
    expect(run).toMatchObject({
      state: 'ERROR',
      status_message: {
        error_code: 'resource_unavailable',
        message: expect.stringContaining("no node could run the run's pod for 15 s") as unknown,
      },
    });
    expect((run.status_message as { message: string }).message).toContain('Insufficient cpu');

    const timeline = (await api('GET', `/agent/runs/${runId}/timeline`)).body.events as Array<{
      kind: string;
      data: { step?: string; status?: string; detail?: string };
    }>;
    const waiting = timeline.filter(
      (e) => e.kind === 'setup_step' && e.data.detail?.includes('waiting for a node'),
    );
    expect(waiting).toHaveLength(1);
    expect(waiting[0]!.data).toMatchObject({ step: 'workspace', status: 'started' });
    expect(waiting[0]!.data.detail).toContain('Insufficient cpu');
  });
});
