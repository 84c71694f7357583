import { randomBytes } from 'node:crypto';
import type { Logger } from '@conveyor/logger';
import { KubernetesApiError, type KubernetesClient } from './kubernetes-api';
import { RUNNER_LABEL, runLabels, runPod, type PodSettings } from './kubernetes-objects';
import { waitForPodStart, type PodStartBounds } from './pod-start';
import type { SandboxLimits, SandboxPolicy } from '../run-sandbox';

/** Label of every warm Pod, kept once claimed: the pool's deny-all NetworkPolicy selects it. */
export const WARM_LABEL = 'conveyor.dev/warm-pod';
/** The pool's NetworkPolicy: no ingress, no egress for a Pod no run has claimed yet. */
export const WARM_POLICY = 'conveyor-warm-pods';

/** The pool of one image: how many warm Pods it keeps at least and at most. */
export interface WarmPodBounds {
  floor: number;
  ceiling: number;
}

export interface WarmPodsOptions {
  namespace: string;
  /** Per image; images not named get no pool (their runs start a Pod of their own). */
  images: ReadonlyMap<string, WarmPodBounds>;
  /** The pool keeps as many Pods as were claimed or missed in this window (within its floor and ceiling). */
  demandWindowMs: number;
  /** A warm Pod unclaimed this long is replaced (its deadline is this plus the run's wall clock). */
  maxIdleMs: number;
  /** A snapshot up to this size is streamed into a warm Pod; a larger one gets a Pod of its own that mounts it. */
  streamMaxBytes: number;
  /** The runner's run limits: warm Pods are made with them; a run with others gets a Pod of its own. */
  limits: SandboxLimits;
  /** The parts of a run Pod that are the runner's, not a run's (owner, CPU, the gateway's port). */
  pod: Omit<PodSettings, 'name' | 'image' | 'snapshot'>;
  podStart: PodStartBounds;
  logger: Logger;
  now?: () => number;
}

export interface WarmPodStats {
  image: string;
  /** Started and waiting to be claimed. */
  ready: number;
  starting: number;
  hits: number;
  misses: number;
}

/** A started Pod handed to exactly one run. */
export interface ClaimedPod {
  name: string;
  /**
   * Labels it as claimed by the run's execution (the orphan reconciler then treats it as that run's Pod, an adopter
   * finds it) and cuts its deadline to the run's wall clock, counted from when the Pod was made.
   */
  claim(policy: Pick<SandboxPolicy, 'runId' | 'execution' | 'limits'>): Promise<void>;
}

interface Pool {
  bounds: WarmPodBounds;
  ready: Array<{ name: string; createdAt: number }>;
  starting: number;
  hits: number;
  misses: number;
  /** When each claim or miss of the window happened. */
  demand: number[];
}

/**
 * Started, team-neutral run Pods per image (docs/sandbox.md, "Warm run Pods"): made from the runner's settings alone
 * (no run, team, environment, key or snapshot: those enter only through exec after the claim), under a NetworkPolicy
 * that lets them reach nothing. A run takes one out of the pool for good (take() is synchronous, so two runs never
 * get the same one); the pool never takes a Pod back, it makes a new one. The Pod start is what the pool saves: about
 * 0.8–1.3 s of every run's time to agent on the test cluster (bench/README.md).
 */
export class WarmPods {
  private readonly pools = new Map<string, Pool>();
  private readonly now: () => number;
  private ticker: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly options: WarmPodsOptions,
    private readonly api: KubernetesClient,
  ) {
    this.now = options.now ?? Date.now;
    for (const [image, bounds] of options.images)
      this.pools.set(image, { bounds, ready: [], starting: 0, hits: 0, misses: 0, demand: [] });
  }

  /** Makes the pool's NetworkPolicy, fills every pool to its floor and then keeps each at its size. */
  async start(): Promise<void> {
    await this.api
      .createNetworkPolicy(this.options.namespace, warmPodsPolicy(this.options.namespace))
      .catch((err: unknown) => {
        // Another replica (or this one before a restart) made it.
        if (!(err instanceof KubernetesApiError && err.status === 409)) throw err;
      });
    this.resize();
    this.ticker = setInterval(() => this.resize(), Math.min(10_000, this.options.maxIdleMs / 4));
    this.ticker.unref();
  }

  get streamMaxBytes(): number {
    return this.options.streamMaxBytes;
  }

  /** Whether runs of `image` may take a warm Pod. */
  serves(image: string): boolean {
    return this.pools.has(image);
  }

  /**
   * A started Pod of `image` made with these limits, taken out of the pool for good; undefined (a miss) when there is
   * none. Either way the pool's demand grows and it refills.
   */
  take(image: string, limits: SandboxLimits): ClaimedPod | undefined {
    const pool = this.pools.get(image);
    if (!pool || this.stopped) return undefined;
    pool.demand.push(this.now());
    // Pods idle too long go first: their deadline could not be cut to this run's.
    this.resize();
    const fits =
      limits.memoryBytes === this.options.limits.memoryBytes &&
      limits.diskBytes === this.options.limits.diskBytes &&
      limits.wallClockMs <= this.options.limits.wallClockMs;
    const taken = fits ? pool.ready.shift() : undefined;
    if (taken) pool.hits += 1;
    else pool.misses += 1;
    this.resize();
    if (!taken) return undefined;
    return {
      name: taken.name,
      claim: (policy) =>
        this.api.patchPod(this.options.namespace, taken.name, {
          metadata: { labels: { [WARM_LABEL]: 'claimed', ...runLabels(policy) } },
          spec: {
            // The API lets a deadline only shrink: never more than the one the Pod was made with.
            activeDeadlineSeconds: Math.min(
              Math.ceil((this.now() - taken.createdAt) / 1000) + Math.ceil(policy.limits.wallClockMs / 1000),
              Math.ceil((this.options.limits.wallClockMs + this.options.maxIdleMs) / 1000),
            ),
          },
        }),
    };
  }

  stats(): WarmPodStats[] {
    return [...this.pools].map(([image, pool]) => ({
      image,
      ready: pool.ready.length,
      starting: pool.starting,
      hits: pool.hits,
      misses: pool.misses,
    }));
  }

  /** Deletes the Pods no run claimed; claimed ones go with their runs. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.ticker);
    const unclaimed = [...this.pools.values()].flatMap((pool) => pool.ready.splice(0));
    await Promise.all(unclaimed.map(({ name }) => this.delete(name)));
  }

  /** Retires Pods idle too long and brings each pool to its target: recent demand, within floor and ceiling. */
  private resize(): void {
    if (this.stopped) return;
    const now = this.now();
    for (const [image, pool] of this.pools) {
      pool.demand = pool.demand.filter((at) => at > now - this.options.demandWindowMs);
      const stale = pool.ready.filter((pod) => now - pod.createdAt >= this.options.maxIdleMs);
      pool.ready = pool.ready.filter((pod) => !stale.includes(pod));
      const target = Math.min(pool.bounds.ceiling, Math.max(pool.bounds.floor, pool.demand.length));
      // Above target (demand fell): the oldest go first.
      const surplus = pool.ready.length + pool.starting - target;
      if (surplus > 0) stale.push(...pool.ready.splice(0, Math.min(surplus, pool.ready.length)));
      for (const { name } of stale) void this.delete(name);
      for (let i = pool.ready.length + pool.starting; i < target; i += 1) void this.add(image, pool);
    }
  }

  private async add(image: string, pool: Pool): Promise<void> {
    const name = `warm-${randomBytes(6).toString('hex')}`;
    const { namespace } = this.options;
    pool.starting += 1;
    const createdAt = this.now();
    try {
      await this.api.createPod(namespace, this.warmPod(name, image));
      await waitForPodStart(
        () => this.api.podPhase(namespace, name),
        this.options.podStart,
        () => undefined,
        this.api.podChanges && ((onChange) => this.api.podChanges!(namespace, name, onChange)),
      );
      pool.starting -= 1;
      if (this.stopped) return void (await this.delete(name));
      pool.ready.push({ name, createdAt });
    } catch (err) {
      pool.starting -= 1;
      // Refilled at the next resize, not at once: a pool the cluster cannot place must not loop.
      this.options.logger.warn({ image, pod: name, err: (err as Error).message }, 'warm pod did not start');
      await this.delete(name);
    }
  }

  /**
   * A run Pod built by runPod() from nothing of any run: the runner's limits with the idle time added to its wall
   * clock (cut back at the claim), no snapshot volume.
   */
  private warmPod(name: string, image: string) {
    const { limits, maxIdleMs, pod } = this.options;
    return runPod(
      {
        runId: name,
        allowedHosts: [],
        endpoints: [],
        limits: { ...limits, wallClockMs: limits.wallClockMs + maxIdleMs },
      },
      {
        ...pod,
        name,
        image,
        // The runner that made it: the orphan reconciler deletes the unclaimed Pods of a runner that is gone.
        labels: { [WARM_LABEL]: 'ready', ...(pod.owner ? { [RUNNER_LABEL]: pod.owner.name } : {}) },
      },
    );
  }

  private delete(name: string): Promise<void> {
    return this.api.deletePod(this.options.namespace, name).catch(() => undefined);
  }
}

/** The pool's NetworkPolicy, shared by the runner replicas: a Pod no run has claimed reaches nothing, nothing reaches it. */
export function warmPodsPolicy(namespace: string) {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { name: WARM_POLICY, namespace, labels: { 'app.kubernetes.io/managed-by': 'conveyor-runner' } },
    spec: {
      podSelector: { matchExpressions: [{ key: WARM_LABEL, operator: 'Exists' }] },
      policyTypes: ['Ingress', 'Egress'],
      ingress: [],
      egress: [],
    },
  };
}
