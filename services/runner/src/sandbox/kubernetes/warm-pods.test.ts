import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '@conveyor/logger';
import type { ExecStatus, KubernetesClient, PodPatch } from './kubernetes-api';
import { KubernetesBackend, type KubernetesBackendOptions } from './kubernetes-backend';
import type { runPod } from './kubernetes-objects';
import { CHECKPOINTS_DIR, PodCheckpoints } from './pod-checkpoints';
import { PodSnapshots } from './pod-snapshots';
import { RunGateway } from './run-gateway';
import { LONE_PROCESS_ROUTES } from './run-routes';
import { WARM_LABEL, WARM_POLICY, WarmPods, type WarmPodsOptions } from './warm-pods';
import type { RunSandbox, SandboxLimits, SandboxPolicy } from '../run-sandbox';
import { SnapshotStore } from '../snapshot-store';

// Warm run Pods (docs/sandbox.md) over a fake of the Kubernetes port that records every call in order: what a Pod
// holds before a run claims it, the order of the claim, and that no Pod serves two runs.

type Pod = ReturnType<typeof runPod>;
const label = (pod: Pod, key: string) => (pod.metadata.labels as Record<string, string>)[key];

class RecordingKubernetes implements KubernetesClient {
  readonly pods = new Map<string, Pod>();
  /** Every Pod body ever created, deleted ones included. */
  readonly created: Pod[] = [];
  readonly policies = new Set<string>();
  readonly calls: string[] = [];
  readonly patches = new Map<string, PodPatch>();

  async probe() {}
  async listPods() {
    return [];
  }
  async listNetworkPolicies() {
    return [];
  }
  async createNetworkPolicy(_namespace: string, body: { metadata: { name: string } }) {
    this.calls.push(`create networkpolicy ${body.metadata.name}`);
    this.policies.add(body.metadata.name);
  }
  async deleteNetworkPolicy(_namespace: string, name: string) {
    this.calls.push(`delete networkpolicy ${name}`);
    this.policies.delete(name);
  }
  async createPod(_namespace: string, body: Pod) {
    this.calls.push(`create pod ${body.metadata.name}`);
    this.pods.set(body.metadata.name, body);
    this.created.push(body);
  }
  async deletePod(_namespace: string, name: string) {
    this.calls.push(`delete pod ${name}`);
    this.pods.delete(name);
  }
  async patchPod(_namespace: string, name: string, patch: PodPatch) {
    this.calls.push(`patch pod ${name}`);
    this.patches.set(name, patch);
  }
  async podPhase() {
    return { phase: 'Running' };
  }
  async podEnd() {
    return { deleting: false, phase: 'Running' };
  }
  async exec(
    _namespace: string,
    pod: string,
    command: string[],
    _io: unknown,
    onStatus: (status: ExecStatus) => void,
  ) {
    this.calls.push(`exec ${pod} ${command.join(' ')}`);
    setImmediate(() => onStatus({ status: 'Success' }));
    return { close: () => undefined };
  }
}

const logger = createLogger({ service: 'test', level: 'silent' });
const IMAGE = 'conveyor/run:1';
const LIMITS: SandboxLimits = {
  wallClockMs: 60_000,
  maxProcesses: 64,
  memoryBytes: 256 * 1024 ** 2,
  diskBytes: 64 * 1024 ** 2,
};
const TEAM_A = { teamId: 'team_a', key: 'a1'.repeat(32) };

let gateway: RunGateway;
beforeAll(async () => {
  gateway = await RunGateway.listen({ host: '127.0.0.1', port: 0 }, LONE_PROCESS_ROUTES, 60_000, logger);
});
afterAll(() => gateway.close());

const policy = (overrides: Partial<SandboxPolicy> = {}): SandboxPolicy => ({
  runId: 'run_TeamARun01',
  allowedHosts: ['api.team-a.example'],
  endpoints: [{ name: 'model', target: { host: '127.0.0.1', port: 9 } }],
  limits: LIMITS,
  ...overrides,
});

/** Lets the pool's background starts run to their end (the fake answers every call on a later turn at most). */
const settle = async () => {
  for (let i = 0; i < 50; i += 1) await new Promise((resolve) => setImmediate(resolve));
};

describe('warm run Pods', () => {
  let api: RecordingKubernetes;
  let pool: WarmPods;
  let backend: KubernetesBackend;
  let clock: number;
  const open: RunSandbox[] = [];

  const start = async (
    options: Partial<WarmPodsOptions> = {},
    backendOptions: Partial<KubernetesBackendOptions> = {},
  ) => {
    api = new RecordingKubernetes();
    clock = 1_000_000;
    pool = new WarmPods(
      {
        namespace: 'conveyor',
        images: new Map([[IMAGE, { floor: 1, ceiling: 3 }]]),
        demandWindowMs: 60_000,
        maxIdleMs: 600_000,
        streamMaxBytes: 1024,
        limits: LIMITS,
        pod: {
          namespace: 'conveyor',
          owner: { name: 'conveyor-runner-abc', uid: '0b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9' },
          runnerPodLabels: { 'app.kubernetes.io/name': 'conveyor-runner' },
          gatewayPort: gateway.port,
          cpu: { request: '1', limit: '1' },
        },
        podStart: { startTimeoutMs: 30_000, unschedulableTimeoutMs: 30_000, pollMs: 1000 },
        logger,
        now: () => clock,
        ...options,
      },
      api,
    );
    backend = new KubernetesBackend(
      {
        namespace: 'conveyor',
        gateway: { server: gateway, address: `10.96.0.30:${gateway.port}` },
        runnerPodLabels: { 'app.kubernetes.io/name': 'conveyor-runner' },
        defaultImage: IMAGE,
        cpu: { request: '1', limit: '1' },
        internalHosts: [],
        podStart: { startTimeoutMs: 30_000, unschedulableTimeoutMs: 30_000 },
        warmPods: pool,
        logger,
        ...backendOptions,
      },
      api,
    );
    await backend.check();
    await settle();
  };
  const prepare = async (p = policy()) => {
    const sandbox = await backend.prepare(p);
    open.push(sandbox);
    return sandbox;
  };
  const warmNames = () => [...api.pods.keys()].filter((name) => name.startsWith('warm-'));

  afterEach(async () => {
    await Promise.all(open.splice(0).map((s) => s.destroy()));
    await pool.stop();
  });

  it('creates warm Pods where the operator places run Pods', async () => {
    const placement = {
      nodeSelector: { 'conveyor.dev/runs': 'true' },
      tolerations: [{ key: 'conveyor.dev/runs', operator: 'Exists', effect: 'NoSchedule' }],
      priorityClassName: '',
    };
    await start({
      pod: {
        namespace: 'conveyor',
        runnerPodLabels: { 'app.kubernetes.io/name': 'conveyor-runner' },
        gatewayPort: gateway.port,
        cpu: { request: '1', limit: '1' },
        placement,
      },
    });
    const [first] = warmNames();
    const { spec } = api.pods.get(first!)!;
    expect(spec.nodeSelector).toEqual(placement.nodeSelector);
    expect(spec.tolerations).toEqual(placement.tolerations);
    // An empty class leaves the cluster's default.
    expect(spec.priorityClassName).toBeUndefined();
  });

  it('starts team-neutral Pods under a deny-all NetworkPolicy made before the first of them', async () => {
    await start();
    const [first] = warmNames();
    expect(first).toBeDefined();
    expect(api.calls.indexOf(`create networkpolicy ${WARM_POLICY}`)).toBeGreaterThanOrEqual(0);
    expect(api.calls.indexOf(`create networkpolicy ${WARM_POLICY}`)).toBeLessThan(
      api.calls.indexOf(`create pod ${first}`),
    );
    const pod = api.pods.get(first!)!;
    expect(label(pod, WARM_LABEL)).toBe('ready');
    // No run's policy selects it yet: the pool's is the only one.
    expect(api.policies).toEqual(new Set([WARM_POLICY]));
    expect(pod.spec.volumes.map((v) => v.name)).toEqual(['workspace', 'tmp']);
    expect(pod.spec.containers[0]!).not.toHaveProperty('env');
  });

  it('holds nothing of a run or its team before the claim, its refills nothing of the run that claimed', async () => {
    await start();
    const sandbox = await prepare(policy({ snapshot: TEAM_A }));
    const claimed = [...api.patches.keys()][0]!;
    await settle();
    // The run's own marks: its ID, team, allowed host, and the key that opens its egress and endpoints.
    const marks = [
      'run_TeamARun01',
      'runteamarun01',
      TEAM_A.teamId,
      TEAM_A.key,
      'team-a.example',
      sandbox.secrets![0]!,
    ];
    expect(api.created.length).toBeGreaterThanOrEqual(2);
    for (const body of api.created)
      for (const mark of marks) expect(JSON.stringify(body)).not.toContain(mark);
    // Everything of the run reaches the Pod by exec, and only after the claim.
    const claimedAt = api.calls.indexOf(`patch pod ${claimed}`);
    const firstExec = api.calls.findIndex((call) => call.startsWith(`exec ${claimed}`));
    expect(claimedAt).toBeGreaterThanOrEqual(0);
    expect(firstExec === -1 || firstExec > claimedAt).toBe(true);
  });

  it("applies the run's NetworkPolicy to the claimed Pod before the run's first command", async () => {
    await start();
    const sandbox = await prepare();
    const [claimed] = [...api.patches.keys()];
    expect(claimed).toMatch(/^warm-/);
    // The run's policy selects the Pod by its run label, which the Pod has had since it was made.
    expect(api.pods.get(claimed!)!.metadata.labels['conveyor.dev/run-sandbox']).toBe(claimed);
    await sandbox.exec({ argv: ['true'], env: { SECRET: 'team-a-secret' } }).exited;
    const policyAt = api.calls.indexOf(`create networkpolicy ${claimed}`);
    const execAt = api.calls.findIndex((call) => call.startsWith(`exec ${claimed}`));
    expect(policyAt).toBeGreaterThanOrEqual(0);
    expect(execAt).toBeGreaterThan(policyAt);
    // Its deadline is cut to the run's wall clock (it waited 5 s).
    clock += 5_000;
    await prepare(policy({ execution: 2 }));
    const second = [...api.patches.keys()][1]!;
    // Labelled with the run's execution: the Pod an adopter of that execution takes, collected once the run goes on.
    expect(api.patches.get(second)).toEqual({
      metadata: {
        labels: {
          [WARM_LABEL]: 'claimed',
          'conveyor.dev/run-id': 'run_TeamARun01',
          'conveyor.dev/execution': '2',
        },
      },
      spec: { activeDeadlineSeconds: 5 + 60 },
    });
  });

  it("claims a warm Pod while the run's NetworkPolicy is made, and hands the run nothing before that policy exists", async () => {
    await start();
    const create = api.createNetworkPolicy.bind(api);
    let made!: () => void;
    const policyCreated = new Promise<void>((resolve) => (made = resolve));
    api.createNetworkPolicy = async (namespace, body) => {
      await policyCreated;
      return create(namespace, body);
    };
    let ready = false;
    const preparing = prepare().then((sandbox) => {
      ready = true;
      return sandbox;
    });
    await settle();
    // The claim went out while the policy was still being made (one round trip fewer before the agent) …
    const [claimed] = [...api.patches.keys()];
    expect(claimed).toMatch(/^warm-/);
    // … but the run gets the sandbox (and with it the only way in: exec) only once the policy exists.
    expect(ready).toBe(false);
    expect(api.calls.some((call) => call.startsWith('exec '))).toBe(false);
    made();
    const sandbox = await preparing;
    await sandbox.exec({ argv: ['true'], env: {} }).exited;
    const policyAt = api.calls.indexOf(`create networkpolicy ${claimed}`);
    expect(policyAt).toBeGreaterThanOrEqual(0);
    expect(api.calls.findIndex((call) => call.startsWith(`exec ${claimed}`))).toBeGreaterThan(policyAt);
  });

  it('gives a Pod to one run only, and never back to the pool', async () => {
    await start({ images: new Map([[IMAGE, { floor: 2, ceiling: 2 }]]) });
    expect(warmNames()).toHaveLength(2);
    const pods = () => [...api.patches.keys()];
    const [a, b] = await Promise.all([prepare(), prepare()]);
    expect(pods()).toHaveLength(2);
    expect(new Set(pods()).size).toBe(2);
    const firstRun = pods()[0]!;
    await a!.destroy();
    await b!.destroy();
    expect(api.pods.has(firstRun)).toBe(false);
    await settle();
    await prepare();
    expect(pods()).toHaveLength(3);
    expect(new Set(pods()).size).toBe(3);
    expect(pool.stats()).toEqual([{ image: IMAGE, ready: 2, starting: 0, hits: 3, misses: 0 }]);
  });

  it('grows with recent demand up to its ceiling, shrinks back to its floor, and replaces idle Pods', async () => {
    await start({ images: new Map([[IMAGE, { floor: 1, ceiling: 3 }]]) });
    expect(warmNames()).toHaveLength(1);
    for (let i = 0; i < 5; i += 1) {
      await prepare();
      await settle();
    }
    expect(pool.stats()[0]).toMatchObject({ ready: 3 });
    const busy = new Set(warmNames());
    // A run with limits the pool does not make Pods with starts its own: a miss.
    await prepare(policy({ limits: { ...LIMITS, memoryBytes: LIMITS.memoryBytes * 2 } }));
    expect(pool.stats()[0]).toMatchObject({ misses: 1 });
    clock += 60_001;
    (pool as unknown as { resize(): void }).resize();
    await settle();
    expect(pool.stats()[0]).toMatchObject({ ready: 1, starting: 0 });
    clock += 600_000;
    (pool as unknown as { resize(): void }).resize();
    await settle();
    const [fresh] = warmNames().filter((name) => !busy.has(name));
    expect(fresh).toBeDefined();
    expect(pool.stats()[0]).toMatchObject({ ready: 1 });
    // A Pod past its idle time is not handed out (its deadline could not be cut to the run's): the run starts its own.
    clock += 600_000;
    const claims = api.patches.size;
    await prepare();
    expect(api.patches.size).toBe(claims);
    expect(api.pods.has(fresh!)).toBe(false);
    expect(pool.stats()[0]).toMatchObject({ misses: 2 });
  });

  it('leaves other images, and runs whose snapshot is larger than streams quickly, to a Pod of their own', async () => {
    const root = await mkdtemp(path.join(os.tmpdir(), 'warm-pods-'));
    try {
      const store = new SnapshotStore(root, { maxAgeMs: 3600_000, maxBytes: 1024 ** 3 }, 'tar');
      await start({}, { snapshots: new PodSnapshots(store, 'conveyor-snapshots') });
      await store.init();
      const team = path.join(root, '.snapshots', TEAM_A.teamId);
      await mkdir(team, { recursive: true });
      await writeFile(path.join(team, `${TEAM_A.key}.tar`), Buffer.alloc(4096));
      await writeFile(path.join(team, `${TEAM_A.key}.uid`), '65534');
      await prepare(policy({ snapshot: TEAM_A }));
      await prepare(policy({ image: 'registry.example/other:1' }));
      expect(api.patches.size).toBe(0);
      const own = [...api.pods.values()].filter((pod) => !label(pod, WARM_LABEL));
      expect(own).toHaveLength(2);
      expect(own[0]!.spec.volumes.map((v) => v.name)).toContain('snapshot');
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it('leaves a run resumed from its checkpoint to a Pod of its own, the only kind that can mount it', async () => {
    const root = await mkdtemp(path.join(os.tmpdir(), 'warm-pods-'));
    try {
      await start({}, { checkpoints: new PodCheckpoints(root, 'conveyor-snapshots') });
      const run = path.join(root, CHECKPOINTS_DIR, 'run_TeamARun01');
      await mkdir(run, { recursive: true, mode: 0o700 });
      await writeFile(path.join(run, 'workspace.tar'), 'turn 1', { mode: 0o600 });
      await prepare(policy({ resumeFromCheckpoint: true }));
      expect(api.patches.size).toBe(0);
      const own = [...api.pods.values()].filter((pod) => !label(pod, WARM_LABEL));
      expect(own).toHaveLength(1);
      expect(own[0]!.spec.volumes.map((v) => v.name)).toContain('checkpoint');
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
