import type * as grpc from '@grpc/grpc-js';
import { toGrpcError } from '@conveyor/errors';
import type { Logger } from '@conveyor/logger';
import { toAppError } from './database-errors';

/**
 * The gRPC edge of the orchestrator: handlers are plain async functions; this wrapper is the one place where
 * their typed errors become gRPC statuses and where unexpected failures are logged.
 */
export function unary<Req, Res>(
  logger: Logger,
  method: string,
  handler: (request: Req) => Promise<Res>,
): grpc.handleUnaryCall<Req, Res> {
  return (call, callback) => {
    handler(call.request).then(
      (response) => callback(null, response),
      (err: unknown) => {
        const appError = toAppError(err);
        if (appError.code === 'internal_error') logger.error({ err, method }, 'gRPC handler failed');
        callback(toGrpcError(appError) as grpc.ServiceError);
      },
    );
  };
}
