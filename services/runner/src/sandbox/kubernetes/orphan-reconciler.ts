import type { Logger } from '@conveyor/logger';
import type { OrphanKind } from '@conveyor/metrics';
import { KubernetesApiError, type KubernetesClient, type ListedObject } from './kubernetes-api';
import { EXECUTION_LABEL, RUN_ID_LABEL, RUNNER_LABEL } from './kubernetes-objects';
import { WARM_LABEL, WARM_POLICY } from './warm-pods';

/** Every object a runner makes carries it: nothing without it is ever collected. */
export const MANAGED_BY = 'app.kubernetes.io/managed-by=conveyor-runner';

/**
 * What the orchestrator says of a run, and nothing more: `active` (queued, running, or held under a live lease),
 * `ended` (a terminal state), `abandoned` (its lease expired with no taker for longer than the bound), `missing` (no
 * such run: deleted by retention, or never created).
 */
export type RunState = 'active' | 'ended' | 'abandoned' | 'missing';

/** A run's state and its current execution (0 when missing). */
export interface RunStatus {
  state: RunState;
  execution: number;
}

export interface OrphanReconcilerOptions {
  namespace: string;
  /** Between two passes. */
  intervalMs: number;
  /** One batched question for the runs' states; a run it leaves out is kept (nothing is deleted on doubt). */
  runStates(runIds: string[]): Promise<Map<string, RunStatus>>;
  /**
   * Whether this replica holds the reconciler's lock for the next `ttlMs` (taken or renewed): one replica at a time
   * deletes, so two never race over the same objects.
   */
  lock(ttlMs: number): Promise<boolean>;
  /** Label selector of the runner Pods: a warm Pod whose runner is not among them is collected. */
  runnerSelector: string;
  /** A warm Pod unclaimed this long is the live pool's to replace; past it plus one interval, its pool failed to. */
  warmMaxIdleMs: number;
  /** A NetworkPolicy without its Pod younger than this may be a run starting (the policy is made first). */
  policyGraceMs: number;
  /** The runs' checkpoints on the shared claim, when the runner keeps them (pod-checkpoints.ts). */
  checkpoints?: { runs(): Promise<string[]>; remove(runId: string): Promise<void> };
  onCollected(kind: OrphanKind, count: number): void;
  logger: Logger;
  now?: () => number;
}

/**
 * Collects what runs left behind once no runner holds them (docs/sandbox.md "Container backend: Kubernetes", item 4):
 * run Pods are owned by no runner Pod, so a run whose runner died leaves its Pod, its NetworkPolicy and its
 * checkpoint. Every pass lists the runner's objects by label, asks the orchestrator in one call for the states of the
 * runs they name, and deletes those of runs that ended, are gone or were abandoned; a Pod of an earlier execution
 * than its run's current one (a run that went on elsewhere: its former holder lets go and kills nothing); warm Pods
 * of a runner that is gone or past their idle bound; NetworkPolicies whose Pod is gone. It never deletes a Pod of an
 * active run's current execution (or one with no execution label), a ready warm Pod of a live runner within its
 * bound, or anything without the runner's label.
 */
export class OrphanReconciler {
  private ticker: NodeJS.Timeout | undefined;
  private pass: Promise<void> | undefined;
  private readonly now: () => number;

  constructor(
    private readonly options: OrphanReconcilerOptions,
    private readonly api: KubernetesClient,
  ) {
    this.now = options.now ?? Date.now;
  }

  start(): void {
    this.ticker = setInterval(() => {
      if (!this.pass) this.pass = this.sweep().finally(() => (this.pass = undefined));
    }, this.options.intervalMs);
    this.ticker.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.ticker);
    await this.pass;
  }

  /** One pass; a failure is logged and the next pass tries again. */
  async sweep(): Promise<void> {
    const log = this.options.logger;
    try {
      // The lock outlives a pass by two intervals, so a replica that stopped mid-pass hands over soon.
      if (!(await this.options.lock(this.options.intervalMs * 2))) return;
      const { namespace } = this.options;
      const [pods, policies] = await Promise.all([
        this.api.listPods(namespace, MANAGED_BY),
        this.api.listNetworkPolicies(namespace, MANAGED_BY),
      ]);
      const live = pods.filter((pod) => !pod.deleting);
      const runPods = live.filter((pod) => pod.labels[WARM_LABEL] !== 'ready' && pod.labels[RUN_ID_LABEL]);
      const checkpointRuns = (await this.options.checkpoints?.runs()) ?? [];
      const runIds = [...new Set([...runPods.map((pod) => pod.labels[RUN_ID_LABEL]!), ...checkpointRuns])];
      const states = runIds.length > 0 ? await this.options.runStates(runIds) : new Map<string, RunStatus>();
      const orphanPods = runPods.filter((pod) => {
        const run = states.get(pod.labels[RUN_ID_LABEL]!);
        if (!run) return false;
        if (run.state !== 'active') return true;
        const execution = Number(pod.labels[EXECUTION_LABEL]);
        return Number.isInteger(execution) && execution < run.execution;
      });
      for (const pod of orphanPods) {
        const runId = pod.labels[RUN_ID_LABEL]!;
        const { state, execution } = states.get(runId)!;
        log.info(
          { runId, pod: pod.name, state, execution, podExecution: pod.labels[EXECUTION_LABEL] },
          'deleting the Pod of a run no runner holds, or of its earlier execution',
        );
      }
      await this.collect('run_pods', orphanPods, (name) => this.api.deletePod(namespace, name));

      const staleWarm = await this.staleWarmPods(live);
      for (const pod of staleWarm)
        log.info({ pod: pod.name }, 'deleting a warm Pod no live pool will hand out');
      await this.collect('warm_pods', staleWarm, (name) => this.api.deletePod(namespace, name));

      // A run's NetworkPolicy is named as its Pod: once the Pod is gone (collected now or before), so is its need.
      const remaining = new Set(live.map((pod) => pod.name));
      for (const pod of [...orphanPods, ...staleWarm]) remaining.delete(pod.name);
      const orphanPolicies = policies.filter(
        (policy) =>
          policy.name !== WARM_POLICY &&
          !policy.deleting &&
          !remaining.has(policy.name) &&
          this.now() - policy.createdAt > this.options.policyGraceMs,
      );
      await this.collect('network_policies', orphanPolicies, (name) =>
        this.api.deleteNetworkPolicy(namespace, name),
      );

      // A checkpoint is kept while its run may resume; an abandoned run's too, until the orchestrator ends it.
      const endedCheckpoints = checkpointRuns.filter((runId) => {
        const state = states.get(runId)?.state;
        return state === 'ended' || state === 'missing';
      });
      for (const runId of endedCheckpoints) log.info({ runId }, "deleting an ended run's checkpoint");
      await this.collect(
        'checkpoints',
        endedCheckpoints.map((runId) => ({ name: runId })),
        (runId) => this.options.checkpoints!.remove(runId),
      );
    } catch (err) {
      log.warn({ err: describe(err) }, 'the orphan reconciler pass failed; the next one retries');
    }
  }

  /** Ready warm Pods whose runner Pod is gone (its pool went with it), or that outlived their pool's idle bound. */
  private async staleWarmPods(live: ListedObject[]): Promise<ListedObject[]> {
    const ready = live.filter((pod) => pod.labels[WARM_LABEL] === 'ready');
    if (ready.length === 0) return [];
    const runners = new Set(
      (await this.api.listPods(this.options.namespace, this.options.runnerSelector))
        .filter((pod) => !pod.deleting)
        .map((pod) => pod.name),
    );
    const bound = this.options.warmMaxIdleMs + this.options.intervalMs;
    return ready.filter((pod) => {
      const runner = pod.labels[RUNNER_LABEL];
      return (runner !== undefined && !runners.has(runner)) || this.now() - pod.createdAt > bound;
    });
  }

  /** Deletes each; one already gone counts as collected by someone else, another failure leaves it to the next pass. */
  private async collect(
    kind: OrphanKind,
    objects: Array<{ name: string }>,
    remove: (name: string) => Promise<void>,
  ): Promise<void> {
    let count = 0;
    await Promise.all(
      objects.map(async ({ name }) => {
        try {
          await remove(name);
          count += 1;
        } catch (err) {
          if (err instanceof KubernetesApiError && err.status === 404) return;
          this.options.logger.warn({ kind, name, err: describe(err) }, 'could not delete an orphan');
        }
      }),
    );
    if (count > 0) this.options.onCollected(kind, count);
  }
}

/** The error's message alone: no stack or request in the runner's log. */
function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
