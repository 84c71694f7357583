import type { Server } from 'node:http';
import express from 'express';
import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import type { Logger } from '@conveyor/logger';
import { mutualTlsCredentials } from '@conveyor/proto';
import {
  createEnvironmentSnapshotsGauge,
  createMetricsRegistry,
  createRunJobDurationHistogram,
  metricsRouter,
} from '@conveyor/metrics';
import { runJobSchema, type RunJob } from '@conveyor/run-events';
import {
  closeAll,
  closeServer,
  healthRoutes,
  listen,
  Readiness,
  type Service,
  logConnectionOutages,
} from '@conveyor/runtime';
import type { RunnerConfig } from './config';
import { startModelProxy, type RunningModelProxy } from './model-proxy/start-model-proxy';
import { OrchestratorLink } from './orchestrator-link';
import { RunExecutor } from './run-executor';
import { executorOptions } from './run-executor-options';
import { createSandboxBackend } from './sandbox/sandbox-backends';

/**
 * A runner process: a BullMQ worker taking run jobs with bounded concurrency. On stop it takes no new jobs, lets
 * in-flight runs finish until the shutdown deadline, then aborts them (they end in ERROR, retryable).
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
  private readonly stopAll = new AbortController();
  private stopped: Promise<void> | undefined;

  constructor(
    private readonly config: RunnerConfig,
    private readonly logger: Logger,
  ) {}

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
    // Fail closed: a runner that cannot isolate runs takes none.
    const sandbox = await createSandboxBackend(config, logger, (cause) => this.stopAll.abort(cause));
    const snapshots = sandbox.snapshots;
    if (snapshots) createEnvironmentSnapshotsGauge(this.metrics, () => snapshots.stats());
    this.modelProxy = await startModelProxy(config, logger);
    const executor = new RunExecutor(
      link,
      executorOptions(config, config.RUNNER_ID, sandbox, this.modelProxy),
      logger,
    );
    this.worker = new Worker<RunJob>(
      config.RUN_QUEUE,
      async (job) => {
        const stopTimer = jobDuration.startTimer();
        const outcome = await executor.execute(runJobSchema.parse(job.data), this.stopAll.signal);
        if (outcome !== 'skipped') stopTimer({ outcome });
        return outcome;
      },
      { connection: redis, concurrency: config.RUNNER_CONCURRENCY, autorun: true },
    );
    this.worker.on('failed', (job, err) => logger.error({ err, jobId: job?.id }, 'run job failed'));
    // The worker re-emits its connection's failures, which logConnectionOutages above logs once.
    this.worker.on('error', () => undefined);

    const app = express();
    app.use(healthRoutes(this.readiness));
    app.use(metricsRouter(this.metrics));
    ({ server: this.server, port: this.httpPort } = await listen(app, config.HTTP_PORT, config.HTTP_HOST));
    logger.info(
      { runnerId: config.RUNNER_ID, concurrency: config.RUNNER_CONCURRENCY, queue: config.RUN_QUEUE },
      'runner started',
    );
  }

  stop(): Promise<void> {
    this.stopped ??= (async () => {
      this.readiness.markStopping();
      const drainDeadline = setTimeout(
        () => this.stopAll.abort(),
        Math.max(0, this.config.SHUTDOWN_TIMEOUT_MS - 2000),
      );
      await closeAll(this.logger, [
        ['worker', () => this.worker?.close()],
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
