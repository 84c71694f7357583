import os from 'node:os';
import * as grpc from '@grpc/grpc-js';
import type { Logger } from '@conveyor/logger';
import {
  createOrchestratorClients,
  workerCredentials,
  type OrchestratorClients,
  type WorkerDownstream__Output,
  type RunAssignment__Output,
  type WorkerUpstream,
} from '@conveyor/proto';
import { traceCarrierSchema } from '@conveyor/run-events';
import type { TraceCarrier } from '@conveyor/tracing';
import { Backoff, OutageLog, type Service } from '@conveyor/runtime';
import { startModelProxy, type RunningModelProxy } from './model-proxy/start-model-proxy';
import { OrchestratorLink } from './orchestrator-link';
import { RunExecutor } from './run-executor';
import { executorOptions } from './run-executor-options';
import { createSandboxBackend } from './sandbox/sandbox-backends';
import { durableExecutions, takeBackRuns } from './take-back-runs';
import type { SandboxBackend } from './sandbox/run-sandbox';
import type { WorkerConfig } from './worker-config';

/**
 * The self-hosted worker: the runner's RunExecutor on the customer's machine, fed over one long-lived
 * WorkerService.Connect stream instead of the BullMQ queue (docs/workers.md). It says hello with the team's worker
 * token, heartbeats at the interval the platform asks for, executes the runs pushed to it (already claimed for it)
 * and reports through RunnerService like any runner. A dropped connection is retried with backoff; a refused token
 * or worker ID is fatal. Like the runner it takes back the runs its previous process left (docs/workers.md). Stop: no
 * new runs; agents running durable are left to the next process, the others drain until the deadline, then are aborted.
 */
export class SelfHostedWorker implements Service {
  private clients: OrchestratorClients | undefined;
  private link: OrchestratorLink | undefined;
  private sandbox: SandboxBackend | undefined;
  private modelProxy: RunningModelProxy | undefined;
  private call: grpc.ClientDuplexStream<WorkerUpstream, WorkerDownstream__Output> | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private readonly inFlight = new Set<Promise<unknown>>();
  private readonly stopAll = new AbortController();
  private stopping = false;
  private stopped: Promise<void> | undefined;
  private durable: ReturnType<typeof durableExecutions> = {};
  /**
   * The runs the previous worker process left, taken back once connected (their reports need the platform); runs
   * pushed to this process start after it, so the leftovers are sorted out before any new sandbox exists.
   */
  private tookBack: Promise<unknown> | undefined;
  /** Reconnection delays (250 ms doubled up to RECONNECT_MAX_DELAY_MS, with jitter), the outage logged once. */
  private readonly backoff: Backoff;
  private readonly outage: OutageLog;

  constructor(
    private readonly config: WorkerConfig,
    private readonly logger: Logger,
    /** Called when the platform refuses this worker for good (bad token or worker ID). */
    private readonly onFatal: (reason: string) => void = () => undefined,
  ) {
    this.backoff = new Backoff(250, config.RECONNECT_MAX_DELAY_MS);
    this.outage = new OutageLog(
      logger,
      { loop: 'connection to the platform', dependency: 'orchestrator' },
      { connection: true },
    );
  }

  async start(): Promise<void> {
    // The worker endpoint, never the core: server-authenticated TLS, the team's worker token on every call. Read
    // first: the local sandbox's start drops root.
    const credentials = workerCredentials(
      this.config.WORKER_ENDPOINT_CA_FILE,
      this.config.CONVEYOR_WORKER_TOKEN,
    );
    // Fail closed: a worker that cannot isolate runs does not connect for any.
    this.sandbox = await createSandboxBackend(this.config, this.logger, (cause) => this.stopAll.abort(cause));
    this.durable = durableExecutions(this.sandbox, this.config);
    this.modelProxy = await startModelProxy(this.config, this.logger);
    this.clients = createOrchestratorClients(this.config.WORKER_ENDPOINT, credentials);
    this.link = new OrchestratorLink(this.config.WORKER_ENDPOINT, credentials);
    this.connect();
  }

  private connect(): void {
    if (this.stopping || !this.clients || !this.link) return;
    const { config, logger } = this;
    const call = this.clients.workers.Connect();
    this.call = call;
    let executor: RunExecutor | undefined;
    call.on('data', (message: WorkerDownstream__Output) => {
      if (message.welcome) {
        this.backoff.reset();
        this.outage.succeeded();
        const welcome = message.welcome;
        executor = new RunExecutor(
          this.link!,
          { ...executorOptions(config, welcome.runner_id, this.sandbox!, this.modelProxy), ...this.durable },
          logger,
        );
        this.tookBack ??= this.takeBack(executor);
        const beat = () => call.write({ heartbeat: { active_runs: this.inFlight.size } });
        beat();
        if (this.heartbeat) clearInterval(this.heartbeat);
        this.heartbeat = setInterval(beat, Math.max(200, welcome.heartbeat_interval_ms || 5000));
        logger.info(
          { workerId: config.WORKER_ID, connectionId: welcome.connection_id },
          'connected to the platform',
        );
        return;
      }
      if (message.assignment && executor) {
        const assignment = message.assignment;
        const taking = executor;
        const running = this.tookBack!.then(() =>
          taking.execute(
            // The run's span continues the platform's dispatch span (the run's trace), as a runner's continues its job.
            { runId: assignment.run_id, execution: assignment.execution, trace: traceOf(assignment) },
            this.stopAll.signal,
            { claimed: assignment },
          ),
        )
          .catch((err: unknown) => logger.error({ err, runId: assignment.run_id }, 'run execution failed'))
          .finally(() => {
            this.inFlight.delete(running);
            if (!this.stopping) call.write({ heartbeat: { active_runs: this.inFlight.size } });
          });
        this.inFlight.add(running);
      }
    });
    let done = false;
    const retry = (err?: grpc.ServiceError) => {
      if (done) return;
      done = true;
      if (this.heartbeat) clearInterval(this.heartbeat);
      if (this.stopping) return;
      if (err && (err.code === grpc.status.UNAUTHENTICATED || err.code === grpc.status.INVALID_ARGUMENT)) {
        logger.error({ code: err.code, details: err.details }, 'the platform refused this worker');
        this.onFatal(err.details);
        return;
      }
      const delay = this.backoff.next();
      this.outage.failed(err ?? new Error('the platform ended the connection'), delay);
      this.reconnectTimer = setTimeout(() => this.connect(), delay);
    };
    call.on('error', (err: grpc.ServiceError) => retry(err));
    call.on('end', () => retry());
    call.write({
      hello: {
        worker_token: config.CONVEYOR_WORKER_TOKEN,
        worker_id: config.WORKER_ID,
        hostname: os.hostname(),
        version: config.npm_package_version,
        capacity: config.WORKER_CAPACITY,
        acknowledges_followups: true,
      },
    });
  }

  /** Adopts the runs whose agents outlived the previous worker process, counted in flight like any run. */
  private async takeBack(executor: RunExecutor): Promise<void> {
    const taken = await takeBackRuns(
      executor,
      this.sandbox!,
      this.durable.adoptionRecords,
      this.stopAll.signal,
      this.logger,
    );
    for (const run of taken) {
      this.inFlight.add(run);
      void run.finally(() => this.inFlight.delete(run));
    }
  }

  stop(): Promise<void> {
    this.stopped ??= (async () => {
      this.stopping = true;
      // Agents running durable go on alone; the next worker process takes them back.
      this.sandbox?.detach?.();
      if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
      if (this.heartbeat) clearInterval(this.heartbeat);
      this.call?.end();
      const deadline = setTimeout(
        () => this.stopAll.abort(),
        Math.max(0, this.config.SHUTDOWN_TIMEOUT_MS - 2000),
      );
      await Promise.allSettled([...this.inFlight]);
      clearTimeout(deadline);
      this.call?.cancel();
      await this.modelProxy?.proxy.close();
      this.link?.close();
      this.clients?.close();
    })();
    return this.stopped;
  }
}

/** The assignment's trace context, checked like a queue job's: a malformed one is dropped, never fails the run. */
function traceOf(assignment: RunAssignment__Output): TraceCarrier | undefined {
  const carried = traceCarrierSchema.safeParse(assignment.trace);
  if (!carried.success || !carried.data.traceparent) return undefined;
  const { traceparent, tracestate } = carried.data;
  return tracestate ? { traceparent, tracestate } : { traceparent };
}
