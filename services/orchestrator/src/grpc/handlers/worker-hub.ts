import { randomBytes } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { newId, type PrismaClient } from '@conveyor/db';
import { AppError } from '@conveyor/errors';
import type { Logger } from '@conveyor/logger';
import { BackgroundLoop } from '@conveyor/runtime';
import type { WorkerDownstream, WorkerServiceHandlers, WorkerUpstream__Output } from '@conveyor/proto';
import { requireCaller } from '../require-caller';
import { peerOf } from '../rpc-guard';
import { unary } from '../unary-handler';
import { claimRun } from '../../runner/claim-run';
import type { HarnessSessions } from '../../runner/harness-sessions';
import { listConnectedWorkers } from '../../workers/list-workers';
import { authenticateWorkerToken } from '../../workers/worker-token';

export interface WorkerHubOptions {
  /** Interval the worker is told to heartbeat at. */
  heartbeatIntervalMs: number;
  /** A connection silent for this long is no longer listed (and gets no runs). */
  staleAfterMs: number;
  /** How often queued self-hosted runs are looked for, per orchestrator replica. */
  dispatchIntervalMs: number;
  /** Public REST API base URL handed to harnesses with their run-scoped key. */
  apiBaseUrl: string;
  /** Where a continuation's kept agent session comes from. */
  sessions: HarnessSessions;
}

const WORKER_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

type Stream = grpc.ServerDuplexStream<WorkerUpstream__Output, WorkerDownstream>;

interface Connection {
  id: string;
  teamId: string;
  workerId: string;
  /** The runner_id of this connection's runs: a secret, so nobody else can report for them. */
  runnerId: string;
  capacity: number;
  activeRuns: number;
  /** Assignments sent since the worker's last heartbeat (which counts them in active_runs from then on). */
  sentSinceHeartbeat: number;
  lastHeartbeatAt: number;
  stream: Stream;
}

/**
 * Self-hosted workers' side of the orchestrator (docs/workers.md). Each worker holds one bidirectional Connect
 * stream: it says hello with its team's worker token and its worker ID, then heartbeats; this replica records
 * presence in PostgreSQL (so any replica can list it) and pushes it the QUEUED runs routed to its worker ID,
 * claimed on its behalf (compare-and-set, so several connections or replicas never take one run twice).
 */
export class WorkerHub {
  private readonly connections = new Map<string, Connection>();
  private readonly loop: BackgroundLoop;

  constructor(
    private readonly db: PrismaClient,
    private readonly logger: Logger,
    private readonly options: WorkerHubOptions,
  ) {
    this.loop = new BackgroundLoop({
      name: 'self-hosted dispatch',
      dependency: 'postgres',
      intervalMs: options.dispatchIntervalMs,
      run: () => this.dispatchOnce(),
      logger,
      runAtStart: false,
    });
  }

  start(): void {
    this.loop.start();
  }

  grpcHandlers(): { workers: WorkerServiceHandlers } {
    return {
      workers: {
        Connect: (call) => this.accept(call),
        ListConnectedWorkers: unary(this.logger, 'ListConnectedWorkers', (req) =>
          listConnectedWorkers(this.db, requireCaller(req.caller), this.options.staleAfterMs),
        ),
      },
    };
  }

  private accept(stream: Stream): void {
    let connection: Connection | undefined;
    let closed = false;
    const fail = (code: grpc.status, details: string) => {
      if (closed) return;
      closed = true;
      stream.emit('error', { code, details, metadata: new grpc.Metadata() } as grpc.ServiceError);
    };
    const close = () => {
      if (!connection) return;
      const gone = connection;
      connection = undefined;
      this.connections.delete(gone.id);
      void this.db.workerConnection
        .update({ where: { id: gone.id }, data: { disconnectedAt: new Date() } })
        .catch((err: unknown) =>
          this.logger.warn({ err, connectionId: gone.id }, 'could not record worker disconnect'),
        );
      this.logger.info(
        { connectionId: gone.id, workerId: gone.workerId, teamId: gone.teamId },
        'worker disconnected',
      );
    };

    stream.on('data', (message: WorkerUpstream__Output) => {
      if (message.hello) {
        if (connection) return fail(grpc.status.FAILED_PRECONDITION, 'hello was already sent');
        const hello = message.hello;
        void (async () => {
          const token = await authenticateWorkerToken(this.db, hello.worker_token);
          // The hello's token must be the one the worker endpoint authenticated the stream with (same team).
          if (!token || token.teamId !== peerOf(stream)?.teamId)
            return fail(grpc.status.UNAUTHENTICATED, 'A valid worker token is required');
          if (!WORKER_ID.test(hello.worker_id) || hello.worker_id === 'warp') {
            return fail(
              grpc.status.INVALID_ARGUMENT,
              'worker_id must be 1-64 characters of [A-Za-z0-9._-] and not "warp"',
            );
          }
          if (closed) return;
          const now = new Date();
          const id = newId('wconn');
          const capacity = Math.min(Math.max(hello.capacity || 1, 1), 64);
          await this.db.workerConnection.create({
            data: {
              id,
              teamId: token.teamId,
              tokenId: token.id,
              workerId: hello.worker_id,
              hostname: hello.hostname.slice(0, 255),
              version: hello.version.slice(0, 64),
              capacity,
              connectedAt: now,
              lastHeartbeatAt: now,
            },
          });
          connection = {
            id,
            teamId: token.teamId,
            workerId: hello.worker_id,
            runnerId: `worker-${randomBytes(18).toString('base64url')}`,
            capacity,
            activeRuns: 0,
            sentSinceHeartbeat: 0,
            lastHeartbeatAt: now.getTime(),
            stream,
          };
          this.connections.set(id, connection);
          stream.write({
            welcome: {
              connection_id: id,
              runner_id: connection.runnerId,
              heartbeat_interval_ms: this.options.heartbeatIntervalMs,
            },
          });
          this.logger.info(
            { connectionId: id, workerId: hello.worker_id, teamId: token.teamId, capacity },
            'worker connected',
          );
          void this.dispatch();
        })().catch((err: unknown) => {
          this.logger.error({ err }, 'worker hello failed');
          fail(grpc.status.INTERNAL, 'internal error');
        });
        return;
      }
      if (message.heartbeat && connection) {
        const c = connection;
        c.activeRuns = Math.max(0, message.heartbeat.active_runs);
        c.sentSinceHeartbeat = 0;
        c.lastHeartbeatAt = Date.now();
        void this.db.workerConnection
          .update({
            where: { id: c.id },
            data: { lastHeartbeatAt: new Date(c.lastHeartbeatAt), activeRuns: c.activeRuns },
          })
          .catch((err: unknown) =>
            this.logger.warn({ err, connectionId: c.id }, 'could not record worker heartbeat'),
          );
      }
    });
    stream.on('end', () => {
      close();
      if (!closed) {
        closed = true;
        stream.end();
      }
    });
    stream.on('cancelled', close);
    stream.on('error', close);
    stream.on('close', close);
  }

  /** One pass over this replica's connections; passes never overlap. Never rejects. */
  dispatch(): Promise<void> {
    return this.loop.trigger();
  }

  private async dispatchOnce(): Promise<void> {
    const now = Date.now();
    for (const c of this.connections.values()) {
      if (now - c.lastHeartbeatAt > this.options.staleAfterMs) continue;
      const free = c.capacity - c.activeRuns - c.sentSinceHeartbeat;
      if (free <= 0) continue;
      const queued = await this.db.run.findMany({
        where: { teamId: c.teamId, workerHost: c.workerId, state: 'QUEUED' },
        orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
        take: free,
        select: { id: true, execution: true },
      });
      for (const run of queued) {
        if (!this.connections.has(c.id)) break;
        try {
          const assignment = await this.options.sessions.attach(
            await claimRun(this.db, { run_id: run.id, execution: run.execution, runner_id: c.runnerId }),
          );
          c.sentSinceHeartbeat++;
          c.stream.write({ assignment: { ...assignment, api_base_url: this.options.apiBaseUrl } });
          this.logger.info(
            { runId: run.id, execution: run.execution, connectionId: c.id, workerId: c.workerId },
            'run assigned to self-hosted worker',
          );
        } catch (err) {
          // Another connection or replica claimed it first, or it was cancelled meanwhile.
          if (!(err instanceof AppError && err.code === 'conflict')) throw err;
        }
      }
    }
  }

  async stop(): Promise<void> {
    await this.loop.stop();
    for (const c of [...this.connections.values()]) c.stream.end();
  }
}
