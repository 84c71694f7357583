import type { Server } from 'node:http';
import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import type { Logger } from '@conveyor/logger';
import { mutualTlsCredentials } from '@conveyor/proto';
import {
  createEnvironmentSnapshotsGauge,
  createWarmRunPodsGauge,
  createMetricsRegistry,
  createRunJobDurationHistogram,
  createTimeToAgentHistogram,
} from '@conveyor/metrics';
import { runJobSchema, type RunJob } from '@conveyor/run-events';
import {
  closeAll,
  closeServer,
  Readiness,
  type Service,
  logConnectionOutages,
  startShellServer,
} from '@conveyor/runtime';
import type { RunnerConfig } from './config';
import { startModelProxy, type RunningModelProxy } from './model-proxy/start-model-proxy';
import { OrchestratorLink } from './orchestrator-link';
import { RunExecutor } from './run-executor';
import { executorOptions } from './run-executor-options';
import type { SandboxBackend } from './sandbox/run-sandbox';
import { createSandboxBackend } from './sandbox/sandbox-backends';
import { durableExecutions, takeBackRuns } from './take-back-runs';
import { adoptLeasedRuns } from './adopt-leased-runs';
import { RunSlots } from './run-slots';

/** How long a stopping runner lets its runs finish (and releases their leases): the shutdown deadline less a margin. */
const drainMs = (config: Pick<RunnerConfig, 'SHUTDOWN_TIMEOUT_MS'>) =>
  Math.max(0, config.SHUTDOWN_TIMEOUT_MS - 2000);

/**
 * A runner process: a BullMQ worker taking run jobs with bounded concurrency. At start it takes back the runs whose
 * agents outlived its previous process (docs/run-lifecycle.md "Runner restarts"); on Kubernetes it also adopts, every
 * few seconds, the runs other replicas handed over or lost. On stop it takes no new jobs and leaves the runs whose
 * agents run durable to its next process (Kubernetes: releases their leases to the other replicas); the others it lets finish until the shutdown
 * deadline, then aborts them (they end in ERROR, retryable).
 */
export class Runner implements Service {
  readonly readiness = new Readiness();
  /** Served at `/metrics` on the HTTP port (see docs/metrics.md). */
  readonly metrics = createMetricsRegistry('runner');
  httpPort = 0;
  private worker: Worker<RunJob> | undefined;
  private redis: Redis | undefined;
  private link: OrchestratorLink | undefined;
  private server: Server | undefined;
  private modelProxy: RunningModelProxy | undefined;
  private sandbox: SandboxBackend | undefined;
  private orphans: { stop(): Promise<void> } | undefined;
  /** Kubernetes: the asks for runs other replicas left (adopt-leased-runs.ts). */
  private adoption: { stop(): Promise<void> } | undefined;
  /** Executions taken back from the previous runner process (not jobs of this one's worker). */
  private readonly adopted = new Set<Promise<unknown>>();
  /** RUNNER_CONCURRENCY, shared by the queue's jobs and the adopted executions. */
  private readonly slots: RunSlots;
  private readonly stopAll = new AbortController();
  private stopped: Promise<void> | undefined;

  constructor(
    private readonly config: RunnerConfig,
    private readonly logger: Logger,
  ) {
    this.slots = new RunSlots(config.RUNNER_CONCURRENCY);
  }

  async start(): Promise<void> {
    const { config, logger } = this;
    // The TLS key is read now: the local sandbox's start below drops root.
    const link = new OrchestratorLink(config.ORCHESTRATOR_ADDR, mutualTlsCredentials(config));
    this.link = link;
    const redis = new Redis(config.REDIS_URL, { maxRetriesPerRequest: null });
    this.redis = redis;
    logConnectionOutages(redis, logger, 'redis (run queue)');
    this.readiness
      .add('redis', async () => {
        await redis.ping();
      })
      .add('orchestrator', async () => {
        if (!(await link.healthy())) throw new Error('orchestrator not ready');
      });

    const jobDuration = createRunJobDurationHistogram(this.metrics);
    const timeToAgent = createTimeToAgentHistogram(this.metrics);
    // Fail closed: a runner that cannot isolate runs takes none.
    const sandbox = await createSandboxBackend(config, logger, (cause) => this.stopAll.abort(cause), redis);
    this.sandbox = sandbox;
    const snapshots = sandbox.snapshots;
    if (snapshots) createEnvironmentSnapshotsGauge(this.metrics, () => snapshots.stats());
    const warmPods = sandbox.warmPods;
    if (warmPods) createWarmRunPodsGauge(this.metrics, () => warmPods.stats());
    if (config.RUN_SANDBOX === 'kubernetes') {
      // Loaded only here, like the backend: the Kubernetes client is an ES module.
      const { startOrphanReconciler } = await import('./sandbox/kubernetes/start-orphan-reconciler');
      this.orphans = startOrphanReconciler(config, link, redis, this.metrics, logger);
    }
    this.modelProxy = await startModelProxy(config, logger);
    // On Kubernetes any replica reopens any run's Pod: the records are the runs' leases, and a stopping or lost
    // runner's runs are adopted by the others (docs/sandbox.md "Run leases").
    const leases =
      config.RUN_SANDBOX === 'kubernetes'
        ? {
            link,
            runnerId: config.RUNNER_ID,
            bounds: { saveWithinMs: config.RUN_TIMEOUT_MS, releaseWithinMs: drainMs(config) },
            log: logger,
          }
        : undefined;
    const durable = durableExecutions(sandbox, config, leases);
    const executor = new RunExecutor(
      link,
      { ...executorOptions(config, config.RUNNER_ID, sandbox, this.modelProxy), ...durable },
      logger,
    );
    const takeBack = (limit: number) =>
      takeBackRuns(executor, sandbox, durable.adoptionRecords, this.stopAll.signal, logger, limit);
    const onTaken = (taken: Promise<unknown>) => {
      this.slots.adopt(taken);
      this.adopted.add(taken);
      void taken.finally(() => this.adopted.delete(taken));
    };
    for (const taken of await takeBack(this.slots.free())) onTaken(taken);
    if (durable.leased) this.adoption = adoptLeasedRuns(takeBack, onTaken, this.slots, logger);
    this.worker = new Worker<RunJob>(
      config.RUN_QUEUE,
      (job) =>
        this.slots.job(async () => {
          const stopTimer = jobDuration.startTimer();
          const outcome = await executor.execute(runJobSchema.parse(job.data), this.stopAll.signal, {
            onAgentStarted: () => timeToAgent.observe((Date.now() - job.timestamp) / 1000),
          });
          if (outcome !== 'skipped') stopTimer({ outcome });
          return outcome;
        }),
      // Started by the slots, with what adopted runs leave of RUNNER_CONCURRENCY.
      { connection: redis, concurrency: config.RUNNER_CONCURRENCY, autorun: false },
    );
    this.slots.attach(this.worker);
    this.worker.on('failed', (job, err) => logger.error({ err, jobId: job?.id }, 'run job failed'));
    // The worker re-emits its connection's failures, which logConnectionOutages above logs once.
    this.worker.on('error', () => undefined);

    ({ server: this.server, port: this.httpPort } = await startShellServer({
      readiness: this.readiness,
      metrics: this.metrics,
      port: config.HTTP_PORT,
      host: config.HTTP_HOST,
    }));
    logger.info(
      { runnerId: config.RUNNER_ID, concurrency: config.RUNNER_CONCURRENCY, queue: config.RUN_QUEUE },
      'runner started',
    );
  }

  stop(): Promise<void> {
    this.stopped ??= (async () => {
      this.readiness.markStopping();
      // Agents running durable go on alone; the next runner process (Kubernetes: any replica) takes them back.
      await this.adoption?.stop();
      this.slots.detach();
      this.sandbox?.detach?.();
      const drainDeadline = setTimeout(() => this.stopAll.abort(), drainMs(this.config));
      await closeAll(this.logger, [
        ['worker', () => this.worker?.close()],
        ['warm run pods', () => this.sandbox?.warmPods?.stop()],
        ['orphan reconciler', () => this.orphans?.stop()],
        ['runs taken back', () => Promise.all(this.adopted)],
        ['http server', () => this.server && closeServer(this.server)],
        ['model proxy', () => this.modelProxy?.proxy.close()],
        ['orchestrator link', () => this.link?.close()],
        ['redis', () => this.redis?.quit()],
      ]);
      clearTimeout(drainDeadline);
    })();
    return this.stopped;
  }
}
