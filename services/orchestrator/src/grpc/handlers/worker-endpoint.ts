import * as grpc from '@grpc/grpc-js';
import type { PrismaClient } from '@conveyor/db';
import { AppError, toGrpcError } from '@conveyor/errors';
import type { RunnerServiceHandlers, WorkerServiceHandlers } from '@conveyor/proto';
import { toAppError } from '../database-errors';
import { peerOf, type PeerAuthenticator } from '../rpc-guard';
import { authenticateWorkerToken } from '../../workers/worker-token';

/** Worker endpoint peers: the team of the worker token sent as `authorization: Bearer cvw_...` on every call. */
export function workerTokenPeer(db: PrismaClient): PeerAuthenticator {
  return async (call) => {
    const header = call.metadata.get('authorization')[0];
    const token = typeof header === 'string' ? /^Bearer (\S+)$/.exec(header)?.[1] : undefined;
    const row = token ? await authenticateWorkerToken(db, token) : undefined;
    return row ? { kind: 'worker', teamId: row.teamId } : undefined;
  };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

type RunReporting = Pick<
  RunnerServiceHandlers,
  | 'ReportEvents'
  | 'Heartbeat'
  | 'CompleteRun'
  | 'GetHarnessCredential'
  | 'PushRunBranch'
  | 'FetchRunRepository'
>;

/**
 * The run-reporting RPCs (the run's harness credential for the worker's own model proxy, its branch push and its platform-cloned repositories) as the worker endpoint
 * serves them: only for a self-hosted run of the worker's own team (the runner_id check in the handlers then ties it
 * to the one connection holding it). Another team's run is answered as not found, revealing nothing.
 */
export function teamScopedRunReporting(db: PrismaClient, handlers: RunnerServiceHandlers): RunReporting {
  const scoped = <M extends keyof RunReporting>(handler: RunReporting[M]): RunReporting[M] => {
    const inner = handler as unknown as grpc.handleUnaryCall<{ run_id: string }, unknown>;
    const outer: grpc.handleUnaryCall<{ run_id: string }, unknown> = (call, callback) => {
      const teamId = peerOf(call)?.teamId;
      const runId = call.request.run_id;
      const found =
        teamId && UUID.test(runId)
          ? db.run.findFirst({
              where: { id: runId, teamId, workerHost: { not: null } },
              select: { id: true },
            })
          : Promise.resolve(null);
      found.then(
        (run) =>
          run
            ? inner(call, callback)
            : callback(toGrpcError(new AppError('resource_not_found', 'Run not found')) as grpc.ServiceError),
        // A database outage is the retryable UNAVAILABLE: the worker sends its report again.
        (err: unknown) => callback(toGrpcError(toAppError(err)) as grpc.ServiceError),
      );
    };
    return outer as unknown as RunReporting[M];
  };
  return {
    ReportEvents: scoped<'ReportEvents'>(handlers.ReportEvents),
    Heartbeat: scoped<'Heartbeat'>(handlers.Heartbeat),
    CompleteRun: scoped<'CompleteRun'>(handlers.CompleteRun),
    GetHarnessCredential: scoped<'GetHarnessCredential'>(handlers.GetHarnessCredential),
    PushRunBranch: scoped<'PushRunBranch'>(handlers.PushRunBranch),
    FetchRunRepository: scoped<'FetchRunRepository'>(handlers.FetchRunRepository),
  };
}

/** Everything the worker endpoint serves: the worker stream and run reporting; nothing else exists there. */
export function workerEndpointHandlers(
  db: PrismaClient,
  workers: WorkerServiceHandlers,
  runner: RunnerServiceHandlers,
): { workers: Pick<WorkerServiceHandlers, 'Connect'>; runner: RunReporting } {
  return { workers: { Connect: workers.Connect }, runner: teamScopedRunReporting(db, runner) };
}
