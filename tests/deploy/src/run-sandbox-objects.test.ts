import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { runLabels, runNetworkPolicy, runPod, type PodSettings } from '@conveyor/runner';
import type { KubeObject } from './deploy-tools';
import { manifestErrors } from './validate-k8s';

// The objects the runner's Kubernetes sandbox backend creates for each run, checked like the committed manifests:
// kubeconform (strict, Kubernetes schemas) and our policy (non-root, no token, read-only root, resource limits).

const policy = {
  runId: 'f0e1d2c3-0000-4000-8000-000000000001',
  workspaceDir: '/workspaces/run',
  allowedHosts: ['api.anthropic.com'],
  endpoints: [],
  limits: {
    wallClockMs: 3_600_000,
    maxProcesses: 512,
    memoryBytes: 2 * 1024 ** 3,
    diskBytes: 10 * 1024 ** 3,
  },
};
const settings: PodSettings = {
  namespace: 'conveyor',
  name: 'run-f0e1d2c3-abc123',
  image: 'node:20-bookworm-slim',
  runnerPodLabels: { 'app.kubernetes.io/name': 'conveyor-runner' },
  gatewayPort: 8300,
  cpu: { request: '1', limit: '1' },
  owner: { name: 'conveyor-runner-7d9f8-x2x4q', uid: '3f1c2b9e-8d7a-4c6b-9e5f-1a2b3c4d5e6f' },
};

describe('run sandbox objects (Kubernetes backend)', () => {
  const pod = runPod(policy, settings) as unknown as KubeObject & { spec: Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
  const netpol = runNetworkPolicy(settings) as unknown as KubeObject & { spec: Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any

  it('are valid against the Kubernetes schemas and our policy', () => {
    expect(manifestErrors([pod, netpol])).toEqual([]);
  });

  it('stay valid with a CPU limit above the request (SANDBOX_K8S_CPU_LIMIT): a Pod that may burst', () => {
    const burstable = runPod(policy, {
      ...settings,
      cpu: { request: '500m', limit: '2' },
    }) as unknown as KubeObject;
    expect(manifestErrors([burstable])).toEqual([]);
  });

  it('stay valid placed by the operator (SANDBOX_K8S_NODE_SELECTOR, _TOLERATIONS, _PRIORITY_CLASS)', () => {
    const placed = runPod(policy, {
      ...settings,
      placement: {
        nodeSelector: { 'conveyor.dev/pool': 'runs' },
        tolerations: [{ key: 'conveyor.dev/runs', operator: 'Exists', effect: 'NoSchedule' }],
        priorityClassName: 'conveyor-runs',
      },
    }) as unknown as KubeObject;
    expect(manifestErrors([placed])).toEqual([]);
  });

  it('run the environment image as non-root, without a token, capabilities or a writable root', () => {
    const container = pod.spec.containers[0];
    expect(container.image).toBe('node:20-bookworm-slim');
    expect(pod.spec.automountServiceAccountToken).toBe(false);
    expect(pod.spec.enableServiceLinks).toBe(false);
    expect(pod.spec.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 65534 });
    expect(container.securityContext).toEqual({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      privileged: false,
      capabilities: { drop: ['ALL'] },
    });
    expect(container.resources.limits).toEqual({
      cpu: '1',
      memory: String(2 * 1024 ** 3),
      'ephemeral-storage': String(10 * 1024 ** 3),
    });
    expect(pod.spec.activeDeadlineSeconds).toBe(3600);
  });

  it("belong to no runner Pod: a runner's rollout or loss leaves them to the replica that adopts the run", () => {
    // An ownerReference to the runner Pod would let the garbage collector delete a live agent with its runner; the
    // orphan reconciler collects what ended runs leave, by the managed-by label (docs/sandbox.md).
    expect(pod.metadata.ownerReferences).toBeUndefined();
    expect(netpol.metadata.ownerReferences).toBeUndefined();
    expect(pod.metadata.labels).toMatchObject({ 'app.kubernetes.io/managed-by': 'conveyor-runner' });
    expect(netpol.metadata.labels).toMatchObject({ 'app.kubernetes.io/managed-by': 'conveyor-runner' });
  });

  it("carry the run's and its execution's labels as valid label values: what an adopter and the reconciler select", () => {
    const labelled = runPod(policy, {
      ...settings,
      labels: runLabels({ runId: policy.runId, execution: 2 }),
    }) as unknown as KubeObject;
    expect(labelled.metadata.labels).toMatchObject({
      'conveyor.dev/run-id': policy.runId,
      'conveyor.dev/execution': '2',
    });
    expect(manifestErrors([labelled])).toEqual([]);
  });

  it("mount, when the run starts from a snapshot, only its team's archive from the store's claim, read-only", () => {
    const subPath = '.snapshots/team_a/.pin-run-f0e1d2c3-abc123.tar';
    const withSnapshot = runPod(policy, {
      ...settings,
      snapshot: { claim: 'conveyor-snapshots', subPath },
    }) as unknown as KubeObject & { spec: Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
    expect(manifestErrors([withSnapshot])).toEqual([]);
    expect(withSnapshot.spec.volumes).toContainEqual({
      name: 'snapshot',
      persistentVolumeClaim: { claimName: 'conveyor-snapshots', readOnly: true },
    });
    expect(withSnapshot.spec.containers[0].volumeMounts).toContainEqual({
      name: 'snapshot',
      mountPath: '/snapshot.tar',
      subPath,
      readOnly: true,
    });
    expect(JSON.stringify(pod.spec)).not.toContain('snapshot');
  });

  it("allow no ingress and egress only to the runner pods' run gateway port", () => {
    expect(netpol.spec.podSelector).toEqual({ matchLabels: { 'conveyor.dev/run-sandbox': settings.name } });
    expect(netpol.spec.policyTypes).toEqual(['Ingress', 'Egress']);
    expect(netpol.spec.ingress).toEqual([]);
    expect(netpol.spec.egress).toEqual([
      {
        to: [{ podSelector: { matchLabels: { 'app.kubernetes.io/name': 'conveyor-runner' } } }],
        ports: [{ protocol: 'TCP', port: 8300 }],
      },
    ]);
  });
});

// The backend's module as the runner loads it (RUN_SANDBOX=kubernetes), on this Node 20: @kubernetes/client-node 2
// pulls undici 8, which needs Node 22's zlib and threw at load time, so no runner could start with this backend.
const LOAD_AND_CALL = `
const path = require('node:path');
const backendFile = process.argv[1];
const k8s = require(require.resolve('@kubernetes/client-node', { paths: [path.dirname(backendFile)] }));
const { KubernetesBackend } = require(backendFile);
const { clusterClient } = require(path.join(path.dirname(backendFile), 'kubernetes-client.js'));
const config = new k8s.KubeConfig();
config.loadFromOptions({
  clusters: [{ name: 'c', server: 'https://127.0.0.1:9', skipTLSVerify: true }],
  users: [{ name: 'u', token: 't' }],
  contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
  currentContext: 'x',
});
const options = { namespace: 'n', runnerPodLabels: {}, defaultImage: 'i', cpu: { request: '1', limit: '1' }, internalHosts: [],
  startTimeoutMs: 1000, logger: {} };
new KubernetesBackend(options, clusterClient(config)).check().then(
  () => process.exit(2),
  (err) => console.log(err.constructor.name + ': ' + err.message),
);
`;

describe('the Kubernetes backend module', () => {
  it('loads on the Node the images run and calls the API (a closed port: SandboxUnavailable)', () => {
    const backendFile = path.join(
      path.dirname(require.resolve('@conveyor/runner')),
      'sandbox/kubernetes/kubernetes-backend.js',
    );
    const out = execFileSync(process.execPath, ['-e', LOAD_AND_CALL, backendFile], { encoding: 'utf8' });
    expect(out).toMatch(/^SandboxUnavailable: cannot use the Kubernetes API in namespace n/);
  });
});
