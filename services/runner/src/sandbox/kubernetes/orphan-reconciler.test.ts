import { createLogger } from '@conveyor/logger';
import type { OrphanKind } from '@conveyor/metrics';
import { KubernetesApiError, type KubernetesClient, type ListedObject } from './kubernetes-api';
import { EXECUTION_LABEL, RUN_ID_LABEL, RUNNER_LABEL } from './kubernetes-objects';
import { OrphanReconciler, type RunState } from './orphan-reconciler';
import { WARM_LABEL, WARM_POLICY } from './warm-pods';

const NOW = 1_800_000_000_000;
const MANAGED = { 'app.kubernetes.io/managed-by': 'conveyor-runner' };
const RUNNER = { 'app.kubernetes.io/name': 'conveyor-runner' };

/** The objects of one namespace, listed by an exact-match label selector; deletions recorded. */
class FakeCluster {
  pods: ListedObject[] = [];
  policies: ListedObject[] = [];
  readonly deleted: string[] = [];
  /** A Pod another replica deletes between this one's list and its delete. */
  vanishing: string | undefined;

  pod(name: string, labels: Record<string, string>, createdAt = NOW - 60_000) {
    this.pods.push({ name, labels, createdAt, deleting: false });
    this.policies.push({ name, labels: MANAGED, createdAt, deleting: false });
  }

  api(): KubernetesClient {
    const select = (objects: ListedObject[], selector: string) =>
      objects.filter((o) =>
        selector.split(',').every((term) => {
          const [key, value] = term.split('=');
          return o.labels[key!] === value;
        }),
      );
    const remove = (kind: 'pods' | 'policies', name: string) => {
      this.deleted.push(`${kind === 'pods' ? 'pod' : 'networkpolicy'} ${name}`);
      if (kind === 'pods' && name === this.vanishing) this.pods = this.pods.filter((o) => o.name !== name);
      if (!this[kind].some((o) => o.name === name)) throw new KubernetesApiError(404, 'not found');
      this[kind] = this[kind].filter((o) => o.name !== name);
    };
    return {
      listPods: async (_ns, selector) => select(this.pods, selector),
      listNetworkPolicies: async (_ns, selector) => select(this.policies, selector),
      deletePod: async (_ns, name) => remove('pods', name),
      deleteNetworkPolicy: async (_ns, name) => remove('policies', name),
    } as Partial<KubernetesClient> as KubernetesClient;
  }
}

function reconciler(
  cluster: FakeCluster,
  states: Record<string, RunState>,
  extra: { lock?: boolean; checkpoints?: Set<string>; executions?: Record<string, number> } = {},
) {
  const asked: string[][] = [];
  const collected: Array<[OrphanKind, number]> = [];
  const checkpoints = extra.checkpoints;
  const instance = new OrphanReconciler(
    {
      namespace: 'conveyor',
      intervalMs: 30_000,
      runStates: async (runIds) => {
        asked.push(runIds);
        return new Map(
          runIds.flatMap((id) => {
            const state = states[id];
            return state ? [[id, { state, execution: extra.executions?.[id] ?? 1 }] as const] : [];
          }),
        );
      },
      lock: async () => extra.lock ?? true,
      runnerSelector: 'app.kubernetes.io/name=conveyor-runner',
      warmMaxIdleMs: 600_000,
      policyGraceMs: 30_000,
      ...(checkpoints
        ? {
            checkpoints: {
              runs: async () => [...checkpoints],
              remove: async (runId: string) => void checkpoints.delete(runId),
            },
          }
        : {}),
      onCollected: (kind, count) => collected.push([kind, count]),
      logger: createLogger({ service: 'test', level: 'silent' }),
      now: () => NOW,
    },
    cluster.api(),
  );
  return { instance, asked, collected };
}

const run = (id: string) => ({ ...MANAGED, [RUN_ID_LABEL]: id });

describe('OrphanReconciler', () => {
  it("deletes the Pods and NetworkPolicies of ended, missing and abandoned runs, and keeps an active run's", async () => {
    const cluster = new FakeCluster();
    cluster.pod('run-ended', run('r-ended'));
    cluster.pod('run-gone', run('r-gone'));
    cluster.pod('run-abandoned', run('r-abandoned'));
    cluster.pod('run-active', run('r-active'));
    const { instance, asked, collected } = reconciler(cluster, {
      'r-ended': 'ended',
      'r-gone': 'missing',
      'r-abandoned': 'abandoned',
      'r-active': 'active',
    });
    await instance.sweep();
    expect(asked).toEqual([['r-ended', 'r-gone', 'r-abandoned', 'r-active']]);
    expect(cluster.pods.map((p) => p.name)).toEqual(['run-active']);
    expect(cluster.policies.map((p) => p.name)).toEqual(['run-active']);
    expect(collected).toEqual([
      ['run_pods', 3],
      ['network_policies', 3],
    ]);
  });

  it("deletes an active run's Pod of an earlier execution, keeps its current execution's and an unlabelled one", async () => {
    const cluster = new FakeCluster();
    cluster.pod('run-exec1', { ...run('r-on'), [EXECUTION_LABEL]: '1' });
    cluster.pod('run-exec2', { ...run('r-on'), [EXECUTION_LABEL]: '2' });
    // Made by a runner before Pods carried their execution: which one it served is unknown, so it is kept.
    cluster.pod('run-unlabelled', run('r-on'));
    const { instance, collected } = reconciler(cluster, { 'r-on': 'active' }, { executions: { 'r-on': 2 } });
    await instance.sweep();
    expect(cluster.pods.map((p) => p.name)).toEqual(['run-exec2', 'run-unlabelled']);
    expect(collected).toEqual([
      ['run_pods', 1],
      ['network_policies', 1],
    ]);
  });

  it('keeps the Pod of a run the orchestrator did not answer for (nothing deleted on doubt)', async () => {
    const cluster = new FakeCluster();
    cluster.pod('run-unknown', run('r-unknown'));
    await reconciler(cluster, {}).instance.sweep();
    expect(cluster.deleted).toEqual([]);
  });

  it("never touches a Pod without the runner's label, even one naming an ended run", async () => {
    const cluster = new FakeCluster();
    cluster.pods.push({
      name: 'someone-elses',
      labels: { [RUN_ID_LABEL]: 'r-ended' },
      createdAt: 0,
      deleting: false,
    });
    cluster.pod('run-ended', run('r-ended'));
    await reconciler(cluster, { 'r-ended': 'ended' }).instance.sweep();
    expect(cluster.pods.map((p) => p.name)).toEqual(['someone-elses']);
  });

  it('deletes nothing while another replica holds the lock', async () => {
    const cluster = new FakeCluster();
    cluster.pod('run-ended', run('r-ended'));
    const { instance, asked } = reconciler(cluster, { 'r-ended': 'ended' }, { lock: false });
    await instance.sweep();
    expect(asked).toEqual([]);
    expect(cluster.deleted).toEqual([]);
  });

  it("collects a dead runner's unclaimed warm Pods and stale ones; keeps a live runner's within its bound", async () => {
    const cluster = new FakeCluster();
    cluster.pods.push({ name: 'runner-live', labels: RUNNER, createdAt: 0, deleting: false });
    const warm = (runner: string) => ({ ...MANAGED, [WARM_LABEL]: 'ready', [RUNNER_LABEL]: runner });
    cluster.pod('warm-live', warm('runner-live'));
    cluster.pod('warm-dead', warm('runner-dead'));
    cluster.pod('warm-stale', warm('runner-live'), NOW - 700_000);
    // A claimed warm Pod is its run's: kept while the run is active.
    cluster.pod('warm-claimed', {
      ...run('r-active'),
      [WARM_LABEL]: 'claimed',
      [RUNNER_LABEL]: 'runner-dead',
    });
    cluster.policies.push({ name: WARM_POLICY, labels: MANAGED, createdAt: 0, deleting: false });
    const { instance, collected } = reconciler(cluster, { 'r-active': 'active' });
    await instance.sweep();
    expect(cluster.pods.map((p) => p.name).sort()).toEqual(['runner-live', 'warm-claimed', 'warm-live']);
    expect(cluster.policies.map((p) => p.name).sort()).toEqual([WARM_POLICY, 'warm-claimed', 'warm-live']);
    expect(collected).toEqual([
      ['warm_pods', 2],
      ['network_policies', 2],
    ]);
  });

  it('keeps a young NetworkPolicy without its Pod (a run starting) and deletes an old one', async () => {
    const cluster = new FakeCluster();
    cluster.policies.push({ name: 'run-starting', labels: MANAGED, createdAt: NOW - 1000, deleting: false });
    cluster.policies.push({ name: 'run-left', labels: MANAGED, createdAt: NOW - 120_000, deleting: false });
    await reconciler(cluster, {}).instance.sweep();
    expect(cluster.policies.map((p) => p.name)).toEqual(['run-starting']);
  });

  it('removes the checkpoints of ended and missing runs, keeps those of active and abandoned ones', async () => {
    const checkpoints = new Set(['r-ended', 'r-gone', 'r-active', 'r-abandoned']);
    const { instance, collected } = reconciler(
      new FakeCluster(),
      { 'r-ended': 'ended', 'r-gone': 'missing', 'r-active': 'active', 'r-abandoned': 'abandoned' },
      { checkpoints },
    );
    await instance.sweep();
    expect([...checkpoints].sort()).toEqual(['r-abandoned', 'r-active']);
    expect(collected).toEqual([['checkpoints', 2]]);
  });

  it('counts a Pod another replica deleted first as nothing, and goes on', async () => {
    const cluster = new FakeCluster();
    cluster.pod('run-first', run('r-ended'));
    cluster.pod('run-second', run('r-ended'));
    cluster.vanishing = 'run-first';
    const { instance, collected } = reconciler(cluster, { 'r-ended': 'ended' });
    await instance.sweep();
    expect(cluster.pods).toEqual([]);
    expect(collected).toEqual([
      ['run_pods', 1],
      ['network_policies', 2],
    ]);
  });
});
