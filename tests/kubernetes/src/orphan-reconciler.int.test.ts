import { execFile } from 'node:child_process';
import { cluster, eventually, kubectl, pods } from './cluster';
import { api, MODEL, waitForState } from './runs';

// Issue 33: run Pods are owned by no runner Pod, so the runners' orphan reconciler collects what a run left when its
// runner was gone (docs/sandbox.md, "Container backend: Kubernetes", item 4). A Pod made here with the runner's labels
// for a run that ended stands for the Pod a force-deleted runner left: it is deleted within the bound
// (SANDBOX_K8S_ORPHAN_INTERVAL_MS, 3 s in k8s/values/kubernetes-test.yaml), with its NetworkPolicy; the same Pod
// without the runner's managed-by label is not the runner's, and stays.

const LEFT = 'conveyor-test-orphan-left';
const FOREIGN = 'conveyor-test-orphan-foreign';
const TERMINAL = ['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED', 'BLOCKED'];

/** A Pod that only sleeps, with `labels`, as the namespace's restricted policy demands. */
const sleeper = (name: string, labels: Record<string, string>) =>
  JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: cluster.namespace, labels },
    spec: {
      restartPolicy: 'Never',
      automountServiceAccountToken: false,
      securityContext: { runAsNonRoot: true, runAsUser: 65534, seccompProfile: { type: 'RuntimeDefault' } },
      containers: [
        {
          name: 'run',
          image: 'conveyor/run:k8s-test',
          command: ['sleep', '3600'],
          securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
          resources: { requests: { cpu: '10m', memory: '16Mi' }, limits: { cpu: '10m', memory: '16Mi' } },
        },
      ],
    },
  });

const policy = (name: string) =>
  JSON.stringify({
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: {
      name,
      namespace: cluster.namespace,
      labels: { 'app.kubernetes.io/managed-by': 'conveyor-runner' },
    },
    spec: {
      podSelector: { matchLabels: { 'conveyor.dev/run-sandbox': name } },
      policyTypes: ['Ingress', 'Egress'],
    },
  });

/** `kubectl apply` of one manifest on stdin. */
const apply = (manifest: string) =>
  new Promise<void>((resolve, reject) => {
    const child = execFile(
      process.env.KUBECTL ?? 'kubectl',
      ['--kubeconfig', process.env.KUBECONFIG!, '-n', cluster.namespace, 'apply', '-f', '-'],
      (err) => (err ? reject(err) : resolve()),
    );
    child.stdin!.end(manifest);
  });

describe('the orphan reconciler on a cluster', () => {
  afterAll(async () => {
    for (const name of [LEFT, FOREIGN])
      await kubectl('delete', 'pod', name, '--ignore-not-found', '--grace-period=0', '--force').catch(
        () => '',
      );
    await kubectl('delete', 'networkpolicy', LEFT, '--ignore-not-found').catch(() => '');
  });

  it("deletes the runner-labelled Pod and NetworkPolicy of an ended run, and leaves a Pod that is not the runner's", async () => {
    const created = await api('POST', '/agent/runs', {
      prompt: 'ends at once',
      config: { harness: { model_id: MODEL } },
    });
    expect(created.status).toBe(200);
    const runId = created.body.run_id as string;
    await waitForState(runId, TERMINAL);

    await apply(policy(LEFT));
    await apply(
      sleeper(LEFT, {
        'app.kubernetes.io/managed-by': 'conveyor-runner',
        'conveyor.dev/run-sandbox': LEFT,
        'conveyor.dev/run-id': runId,
      }),
    );
    await apply(sleeper(FOREIGN, { 'conveyor.dev/run-id': runId }));

    await eventually(
      async () =>
        (await pods('conveyor.dev/run-id')).some((p) => p.name === LEFT && !p.deleting) ? undefined : true,
      'the left Pod of the ended run to be deleted',
      60_000,
    );
    await eventually(
      async () =>
        (await kubectl('get', 'networkpolicy', LEFT, '--ignore-not-found')).trim() === '' ? true : undefined,
      'its NetworkPolicy to be deleted',
      60_000,
    );
    expect((await pods('conveyor.dev/run-id')).filter((p) => p.name === FOREIGN && !p.deleting)).toHaveLength(
      1,
    );
  });
});
