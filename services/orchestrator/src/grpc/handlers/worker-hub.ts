import * as grpc from '@grpc/grpc-js';
import type { PrismaClient } from '@conveyor/db';
import { AppError } from '@conveyor/errors';
import type { Logger } from '@conveyor/logger';
import type { WorkerDownstream, WorkerServiceHandlers, WorkerUpstream__Output } from '@conveyor/proto';
import { requireCaller } from '../require-caller';
import { peerOf } from '../rpc-guard';
import { unary } from '../unary-handler';
import { listConnectedWorkers } from '../../workers/list-workers';
import type { WorkerDispatch, WorkerLink } from '../../workers/worker-dispatch';
import { authenticateWorkerToken } from '../../workers/worker-token';

export interface WorkerHubOptions {
  /** Interval the worker is told to heartbeat at. */
  heartbeatIntervalMs: number;
  /** A connection silent for this long is no longer listed. */
  staleAfterMs: number;
}

type Stream = grpc.ServerDuplexStream<WorkerUpstream__Output, WorkerDownstream>;

/** What the hub needs of WorkerDispatch: a port, so the stream mapping is tested on its own. */
export type WorkerHubDispatch = Pick<WorkerDispatch, 'connect' | 'heartbeat' | 'disconnect' | 'dispatch'>;

/**
 * Self-hosted workers' Connect streams (docs/workers.md): a worker says hello with its team's worker token and its
 * worker ID, then heartbeats; this maps the stream onto WorkerDispatch (workers/), which records presence and
 * pushes the runs, and writes them back as assignments.
 */
export class WorkerHub {
  constructor(
    private readonly db: PrismaClient,
    private readonly dispatch: WorkerHubDispatch,
    private readonly logger: Logger,
    private readonly options: WorkerHubOptions,
  ) {}

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
    let connectionId: string | undefined;
    let helloSeen = false;
    let closed = false;
    const fail = (code: grpc.status, details: string) => {
      if (closed) return;
      closed = true;
      stream.emit('error', { code, details, metadata: new grpc.Metadata() } as grpc.ServiceError);
    };
    // Any way the stream goes (ended, cancelled, broken) marks it closed, so a hello still being recorded
    // forgets its connection instead of welcoming a dead stream and dispatching runs to it.
    const close = () => {
      closed = true;
      if (connectionId) this.dispatch.disconnect(connectionId);
      connectionId = undefined;
    };

    stream.on('data', (message: WorkerUpstream__Output) => {
      if (message.hello) {
        if (helloSeen) return fail(grpc.status.FAILED_PRECONDITION, 'hello was already sent');
        helloSeen = true;
        const hello = message.hello;
        void (async () => {
          const token = await authenticateWorkerToken(this.db, hello.worker_token);
          // The hello's token must be the one the worker endpoint authenticated the stream with (same team).
          if (!token || token.teamId !== peerOf(stream)?.teamId)
            return fail(grpc.status.UNAUTHENTICATED, 'A valid worker token is required');
          if (closed) return;
          const link: WorkerLink = {
            send: (assignment) => void stream.write({ assignment }),
            close: () => stream.end(),
          };
          const connected = await this.dispatch.connect(
            {
              teamId: token.teamId,
              tokenId: token.id,
              workerId: hello.worker_id,
              hostname: hello.hostname,
              version: hello.version,
              capacity: hello.capacity,
              acknowledgesFollowups: hello.acknowledges_followups,
            },
            link,
          );
          connectionId = connected.connectionId;
          if (closed) return close();
          stream.write({
            welcome: {
              connection_id: connected.connectionId,
              runner_id: connected.runnerId,
              heartbeat_interval_ms: this.options.heartbeatIntervalMs,
            },
          });
          // Runs only after the welcome: it tells the worker the runner_id its assignments are claimed for.
          void this.dispatch.dispatch();
        })().catch((err: unknown) => {
          if (err instanceof AppError && err.code === 'invalid_request')
            return fail(grpc.status.INVALID_ARGUMENT, err.message);
          this.logger.error({ err }, 'worker hello failed');
          fail(grpc.status.INTERNAL, 'internal error');
        });
        return;
      }
      if (message.heartbeat && connectionId)
        this.dispatch.heartbeat(connectionId, message.heartbeat.active_runs);
    });
    stream.on('end', () => {
      const wasOpen = !closed;
      close();
      if (wasOpen) stream.end();
    });
    stream.on('cancelled', close);
    stream.on('error', close);
    stream.on('close', close);
  }
}
