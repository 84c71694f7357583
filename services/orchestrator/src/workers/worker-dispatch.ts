import { randomBytes } from 'node:crypto';
import { newId, type PrismaClient } from '@conveyor/db';
import { AppError } from '@conveyor/errors';
import type { Logger } from '@conveyor/logger';
import { BackgroundLoop } from '@conveyor/runtime';
import { currentTraceCarrier } from '@conveyor/tracing';
import { claimRun } from '../runner/claim-run';
import type { HarnessSessions } from '../runner/harness-sessions';
import type { RunAssignment } from '../runner/runner-messages';
import { inRunTrace } from '../runs/in-run-trace';

export interface WorkerDispatchOptions {
  /** A connection silent for this long is no longer listed (and gets no runs). */
  staleAfterMs: number;
  /** How often queued self-hosted runs are looked for, per orchestrator replica. */
  dispatchIntervalMs: number;
  /** Public REST API base URL handed to harnesses with their run-scoped key. */
  apiBaseUrl: string;
  /** Where a continuation's kept agent session comes from. */
  sessions: HarnessSessions;
}

/** How runs reach one connected worker (its Connect stream, for the gRPC transport). */
export interface WorkerLink {
  send(assignment: RunAssignment): void;
  close(): void;
}

/** A worker's hello, once its team's worker token is authenticated. */
export interface WorkerHello {
  teamId: string;
  tokenId: string;
  workerId: string;
  hostname: string;
  version: string;
  capacity: number;
  /** The worker acknowledges follow-ups: the claims made for it leave theirs pending (claim-run.ts). */
  acknowledgesFollowups?: boolean;
}

const WORKER_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** `warp` is the contract's name for Warp's own hosts, never a self-hosted worker. */
export function checkWorkerId(workerId: string): void {
  if (!WORKER_ID.test(workerId) || workerId === 'warp')
    throw new AppError(
      'invalid_request',
      'worker_id must be 1-64 characters of [A-Za-z0-9._-] and not "warp"',
    );
}

interface Connection {
  id: string;
  teamId: string;
  workerId: string;
  /** The runner_id of this connection's runs: a secret, so nobody else can report for them. */
  runnerId: string;
  capacity: number;
  acknowledgesFollowups: boolean;
  activeRuns: number;
  /** Assignments sent since the worker's last heartbeat (which counts them in active_runs from then on). */
  sentSinceHeartbeat: number;
  lastHeartbeatAt: number;
  link: WorkerLink;
}

/**
 * The self-hosted workers connected to this replica (docs/workers.md): records their presence in PostgreSQL (so any
 * replica can list them) and hands each the QUEUED runs routed to its worker ID, claimed on its behalf
 * (compare-and-set, so several connections or replicas never take one run twice), within its capacity.
 */
export class WorkerDispatch {
  private readonly connections = new Map<string, Connection>();
  private readonly loop: BackgroundLoop;

  constructor(
    private readonly db: PrismaClient,
    private readonly logger: Logger,
    private readonly options: WorkerDispatchOptions,
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

  /** Records a connected worker; the next dispatch pass hands it runs. */
  async connect(hello: WorkerHello, link: WorkerLink): Promise<{ connectionId: string; runnerId: string }> {
    checkWorkerId(hello.workerId);
    const now = new Date();
    const id = newId('wconn');
    const capacity = Math.min(Math.max(hello.capacity || 1, 1), 64);
    await this.db.workerConnection.create({
      data: {
        id,
        teamId: hello.teamId,
        tokenId: hello.tokenId,
        workerId: hello.workerId,
        hostname: hello.hostname.slice(0, 255),
        version: hello.version.slice(0, 64),
        capacity,
        connectedAt: now,
        lastHeartbeatAt: now,
      },
    });
    const runnerId = `worker-${randomBytes(18).toString('base64url')}`;
    this.connections.set(id, {
      id,
      teamId: hello.teamId,
      workerId: hello.workerId,
      runnerId,
      capacity,
      acknowledgesFollowups: hello.acknowledgesFollowups ?? false,
      activeRuns: 0,
      sentSinceHeartbeat: 0,
      lastHeartbeatAt: now.getTime(),
      link,
    });
    this.logger.info(
      { connectionId: id, workerId: hello.workerId, teamId: hello.teamId, capacity },
      'worker connected',
    );
    return { connectionId: id, runnerId };
  }

  /** The worker's own count of its active runs replaces what was sent since its last heartbeat. */
  heartbeat(connectionId: string, activeRuns: number): void {
    const c = this.connections.get(connectionId);
    if (!c) return;
    c.activeRuns = Math.max(0, activeRuns);
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

  disconnect(connectionId: string): void {
    const gone = this.connections.get(connectionId);
    if (!gone) return;
    this.connections.delete(connectionId);
    void this.db.workerConnection
      .update({ where: { id: gone.id }, data: { disconnectedAt: new Date() } })
      .catch((err: unknown) =>
        this.logger.warn({ err, connectionId: gone.id }, 'could not record worker disconnect'),
      );
    this.logger.info(
      { connectionId: gone.id, workerId: gone.workerId, teamId: gone.teamId },
      'worker disconnected',
    );
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
        select: { id: true, execution: true, traceContext: true },
      });
      for (const run of queued) {
        if (!this.connections.has(c.id)) break;
        try {
          await this.assign(c, run);
        } catch (err) {
          // Another connection or replica claimed it first, or it was cancelled meanwhile.
          if (!(err instanceof AppError && err.code === 'conflict')) throw err;
        }
      }
    }
  }

  /**
   * Claims one run for a connection and sends it. In the run's trace (the one it was started or re-queued in), the
   * dispatch is a span whose context the assignment carries: the worker's execution continues it, as a runner's
   * continues the queue job's.
   */
  private assign(
    c: Connection,
    run: { id: string; execution: number; traceContext: unknown },
  ): Promise<void> {
    return inRunTrace('worker dispatch', run, async () => {
      const assignment = await this.options.sessions.attach(
        await claimRun(
          this.db,
          { run_id: run.id, execution: run.execution, runner_id: c.runnerId },
          { acknowledgesFollowups: c.acknowledgesFollowups },
        ),
      );
      c.sentSinceHeartbeat++;
      c.link.send({ ...assignment, api_base_url: this.options.apiBaseUrl, trace: currentTraceCarrier() });
      this.logger.info(
        { runId: run.id, execution: run.execution, connectionId: c.id, workerId: c.workerId },
        'run assigned to self-hosted worker',
      );
    });
  }

  async stop(): Promise<void> {
    await this.loop.stop();
    for (const c of [...this.connections.values()]) c.link.close();
  }
}
