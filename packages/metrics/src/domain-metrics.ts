import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { getOrCreate } from './get-or-create';

// Names of the domain metrics; docs/metrics.md documents each one. Every factory is idempotent per registry.

export const RUN_QUEUE_DEPTH = 'conveyor_run_queue_depth';
export const RUN_JOB_DURATION_SECONDS = 'conveyor_run_job_duration_seconds';
export const KAFKA_CONSUMER_LAG = 'conveyor_kafka_consumer_lag';
export const WEBHOOK_DELIVERIES_TOTAL = 'conveyor_webhook_deliveries_total';
export const RETENTION_DELETED_TOTAL = 'conveyor_retention_deleted_total';

/** A counter with one label whose every series exists from the start at 0 (so a rate over it is never absent). */
function zeroedCounter<L extends string>(
  registry: Registry,
  name: string,
  help: string,
  label: L,
  values: readonly string[],
): Counter<L> {
  return getOrCreate(registry, name, () => {
    const counter = new Counter<L>({ name, help, labelNames: [label], registers: [registry] });
    for (const value of values) counter.inc({ [label]: value } as Partial<Record<L, string>>, 0);
    return counter;
  });
}

export const RUN_QUEUE_STATES = ['waiting', 'active', 'delayed'] as const;
export type RunQueueState = (typeof RUN_QUEUE_STATES)[number];

/**
 * `conveyor_run_queue_depth{state}`: jobs in the BullMQ run queue by state. Pass `collect` to read the counts
 * at scrape time (e.g. `() => queue.getJobCounts('waiting', 'active', 'delayed')`), or call `.set()` yourself.
 */
export function createRunQueueDepthGauge(
  registry: Registry,
  collect?: () => Promise<Partial<Record<RunQueueState, number>>>,
): Gauge<'state'> {
  return getOrCreate(registry, RUN_QUEUE_DEPTH, () => {
    const gauge = new Gauge<'state'>({
      name: RUN_QUEUE_DEPTH,
      help: 'Jobs in the run queue by state (waiting, active, delayed)',
      labelNames: ['state'],
      registers: [registry],
      ...(collect && {
        async collect(this: Gauge<'state'>) {
          const counts = await collect();
          for (const state of RUN_QUEUE_STATES) this.set({ state }, counts[state] ?? 0);
        },
      }),
    });
    for (const state of RUN_QUEUE_STATES) gauge.set({ state }, 0);
    return gauge;
  });
}

/** `conveyor_run_job_duration_seconds{outcome}`: wall time of one run job, by outcome (succeeded, failed, error, cancelled). */
export function createRunJobDurationHistogram(registry: Registry): Histogram<'outcome'> {
  return getOrCreate(
    registry,
    RUN_JOB_DURATION_SECONDS,
    () =>
      new Histogram<'outcome'>({
        name: RUN_JOB_DURATION_SECONDS,
        help: 'Run job wall time in seconds, by outcome',
        labelNames: ['outcome'],
        buckets: [1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200],
        registers: [registry],
      }),
  );
}

/** `conveyor_kafka_consumer_lag{topic,partition}`: log-end offset minus the group's committed offset. */
export function createKafkaConsumerLagGauge(registry: Registry): Gauge<'topic' | 'partition'> {
  return getOrCreate(
    registry,
    KAFKA_CONSUMER_LAG,
    () =>
      new Gauge<'topic' | 'partition'>({
        name: KAFKA_CONSUMER_LAG,
        help: "Messages not yet consumed by this service's consumer group, by topic and partition",
        labelNames: ['topic', 'partition'],
        registers: [registry],
      }),
  );
}

/**
 * `conveyor_webhook_deliveries_total{label}`: deliveries seen at the edge, by delivery-log label. `labels` is the
 * delivery log's own list (`DELIVERY_LABELS` of @conveyor/kafka); each series is present from the start at 0.
 */
export function createWebhookDeliveriesCounter(
  registry: Registry,
  labels: readonly string[],
): Counter<'label'> {
  return zeroedCounter(
    registry,
    WEBHOOK_DELIVERIES_TOTAL,
    'Webhook deliveries by delivery-log label',
    'label',
    labels,
  );
}

export const ENVIRONMENT_SNAPSHOTS = 'conveyor_environment_snapshots';
export const SNAPSHOT_STATS = ['count', 'bytes', 'hits', 'misses', 'evictions'] as const;
export type SnapshotStat = (typeof SNAPSHOT_STATS)[number];

/**
 * `conveyor_environment_snapshots{stat}`: the runner's environment snapshot store, read at scrape time — `count` and
 * `bytes` (host disk) held now; `hits`, `misses` and `evictions` since the runner started.
 */
export function createEnvironmentSnapshotsGauge(
  registry: Registry,
  collect: () => Promise<Record<SnapshotStat, number>>,
): Gauge<'stat'> {
  return getOrCreate(
    registry,
    ENVIRONMENT_SNAPSHOTS,
    () =>
      new Gauge<'stat'>({
        name: ENVIRONMENT_SNAPSHOTS,
        help: 'Environment snapshots: count and bytes held, hits, misses and evictions since start',
        labelNames: ['stat'],
        registers: [registry],
        async collect(this: Gauge<'stat'>) {
          const stats = await collect();
          for (const stat of SNAPSHOT_STATS) this.set({ stat }, stats[stat]);
        },
      }),
  );
}

export const WARM_RUN_PODS = 'conveyor_warm_run_pods';
export const WARM_POD_STATS = ['ready', 'starting', 'hits', 'misses'] as const;
export type WarmPodStat = (typeof WARM_POD_STATS)[number];

/**
 * `conveyor_warm_run_pods{image,stat}`: the runner's warm run Pods (Kubernetes backend), read at scrape time — `ready`
 * (the pool's size: started, unclaimed) and `starting` now; `hits` (runs that took one) and `misses` (runs of a pooled
 * image that started a Pod of their own) since the runner started.
 */
export function createWarmRunPodsGauge(
  registry: Registry,
  collect: () => Array<{ image: string } & Record<WarmPodStat, number>>,
): Gauge<'image' | 'stat'> {
  return getOrCreate(
    registry,
    WARM_RUN_PODS,
    () =>
      new Gauge<'image' | 'stat'>({
        name: WARM_RUN_PODS,
        help: 'Warm run Pods per image: ready and starting now, hits and misses since start',
        labelNames: ['image', 'stat'],
        registers: [registry],
        collect(this: Gauge<'image' | 'stat'>) {
          for (const pool of collect())
            for (const stat of WARM_POD_STATS) this.set({ image: pool.image, stat }, pool[stat]);
        },
      }),
  );
}

export const RETENTION_KINDS = ['runs', 'artifacts', 'blob_keys', 'blob_failures'] as const;
export type RetentionKind = (typeof RETENTION_KINDS)[number];

/**
 * `conveyor_retention_deleted_total{kind}`: what run retention deleted — `runs`, their `artifacts`, `blob_keys` deleted from the blob store (transcripts,
 * artifact bytes, handoff files, harness sessions; a key never written counts too) — and `blob_failures`, blobs it failed to delete (left orphaned,
 * logged). Each series is present from the start at 0.
 */
export function createRetentionDeletedCounter(registry: Registry): Counter<'kind'> {
  const help = 'Expired runs, artifacts and blobs deleted by run retention, and blobs that failed to delete';
  return zeroedCounter(registry, RETENTION_DELETED_TOTAL, help, 'kind', RETENTION_KINDS);
}

export const ORPHANS_COLLECTED_TOTAL = 'conveyor_orphans_collected_total';
export const ORPHAN_KINDS = ['run_pods', 'network_policies', 'warm_pods', 'checkpoints'] as const;
export type OrphanKind = (typeof ORPHAN_KINDS)[number];

/**
 * `conveyor_orphans_collected_total{kind}`: what the runner's orphan reconciler deleted — run Pods of ended, missing or
 * abandoned runs, NetworkPolicies left without their Pod, warm Pods of a runner that is gone or past their deadline,
 * and checkpoints of ended runs. Each series is present from the start at 0.
 */
export function createOrphansCollectedCounter(registry: Registry): Counter<'kind'> {
  const help = 'Run Pods, NetworkPolicies, warm Pods and checkpoints the orphan reconciler deleted';
  return zeroedCounter(registry, ORPHANS_COLLECTED_TOTAL, help, 'kind', ORPHAN_KINDS);
}

export const RUN_QUEUE_OLDEST_WAITING_SECONDS = 'conveyor_run_queue_oldest_waiting_seconds';
export const TIME_TO_AGENT_SECONDS = 'conveyor_time_to_agent_seconds';
export const RUNNERS_LOST_TOTAL = 'conveyor_runners_lost_total';
export const EVENT_DELIVERY_ATTEMPTS_TOTAL = 'conveyor_event_delivery_attempts_total';
export const DEPENDENCY_UP = 'conveyor_dependency_up';

/**
 * `conveyor_run_queue_oldest_waiting_seconds`: how long the oldest waiting job of the run queue has waited (0 when
 * none waits), read at scrape time from `oldestQueuedAt` (epoch ms, or undefined).
 */
export function createRunQueueOldestWaitingGauge(
  registry: Registry,
  oldestQueuedAt: () => Promise<number | undefined>,
): Gauge {
  return getOrCreate(
    registry,
    RUN_QUEUE_OLDEST_WAITING_SECONDS,
    () =>
      new Gauge({
        name: RUN_QUEUE_OLDEST_WAITING_SECONDS,
        help: 'Seconds the oldest waiting job of the run queue has waited (0 when none waits)',
        registers: [registry],
        async collect(this: Gauge) {
          const at = await oldestQueuedAt();
          this.set(at === undefined ? 0 : Math.max(0, (Date.now() - at) / 1000));
        },
      }),
  );
}

/** `conveyor_time_to_agent_seconds`: from a run's job entering the queue to its agent's start, per execution. */
export function createTimeToAgentHistogram(registry: Registry): Histogram {
  return getOrCreate(
    registry,
    TIME_TO_AGENT_SECONDS,
    () =>
      new Histogram({
        name: TIME_TO_AGENT_SECONDS,
        help: "Seconds from a run's job entering the queue to its agent starting",
        buckets: [0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600],
        registers: [registry],
      }),
  );
}

export const LOST_RUN_OUTCOMES = ['requeued', 'errored'] as const;

/**
 * `conveyor_runners_lost_total{outcome}`: runs whose runner stopped heart-beating, by what became of them (`requeued`
 * before their agent started, `errored` after). Both series are present from the start at 0.
 */
export function createRunnersLostCounter(registry: Registry): Counter<'outcome'> {
  const help = 'Runs whose runner was lost, by outcome (requeued, errored)';
  return zeroedCounter(registry, RUNNERS_LOST_TOTAL, help, 'outcome', LOST_RUN_OUTCOMES);
}

export const EVENT_ATTEMPT_OUTCOMES = ['succeeded', 'failed'] as const;

/**
 * `conveyor_event_delivery_attempts_total{outcome}`: attempts to deliver a run event to an event endpoint; `failed`
 * is any attempt not answered 2xx (it is retried or given up). Both series are present from the start at 0.
 */
export function createEventDeliveryAttemptsCounter(registry: Registry): Counter<'outcome'> {
  const help = 'Event endpoint delivery attempts by outcome (succeeded, failed)';
  return zeroedCounter(registry, EVENT_DELIVERY_ATTEMPTS_TOTAL, help, 'outcome', EVENT_ATTEMPT_OUTCOMES);
}

/**
 * `conveyor_dependency_up{dependency}`: 1 when the service's readiness check of the dependency passes, 0 when not,
 * checked at scrape time (`check` is the service's readiness report: PostgreSQL, Redis, Kafka, the orchestrator…).
 */
export function createDependencyUpGauge(
  registry: Registry,
  check: () => Promise<{ checks: Record<string, { ok: boolean }> }>,
): Gauge<'dependency'> {
  return getOrCreate(
    registry,
    DEPENDENCY_UP,
    () =>
      new Gauge<'dependency'>({
        name: DEPENDENCY_UP,
        help: "1 when the service's readiness check of a dependency passes, 0 when it fails",
        labelNames: ['dependency'],
        registers: [registry],
        async collect(this: Gauge<'dependency'>) {
          const { checks } = await check();
          for (const [dependency, result] of Object.entries(checks))
            if (dependency !== 'shutdown') this.set({ dependency }, result.ok ? 1 : 0);
        },
      }),
  );
}
