import { Metadata, status as GrpcStatus, type ServiceError } from '@grpc/grpc-js';
import { AppError } from './app-error';
import { outageMessage } from './dependency-outage';
import { ERROR_TABLE, isErrorCode, type ErrorCode } from './error-codes';

const CODE_KEY = 'x-error-code';
const DETAILS_KEY = 'x-error-details';
const HTTP_KEY = 'x-error-http-status';

/**
 * Metadata values must be printable ASCII (grpc-js throws otherwise, which took the whole process down when a
 * detail echoed user input); JSON's \u escapes keep the text intact and JSON.parse restores it.
 */
const asciiJson = (value: unknown): string =>
  JSON.stringify(value).replace(
    /[\u007f-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );

/** Server side: an AppError as a gRPC error carrying its stable code in trailing metadata. */
export function toGrpcError(err: AppError): Partial<ServiceError> {
  const metadata = new Metadata();
  metadata.set(CODE_KEY, err.code);
  metadata.set(HTTP_KEY, String(err.httpStatus));
  if (err.details) metadata.set(DETAILS_KEY, asciiJson(err.details));
  return { code: ERROR_TABLE[err.code].grpc, details: err.message, metadata };
}

const FALLBACK_BY_STATUS: Partial<Record<GrpcStatus, ErrorCode>> = {
  [GrpcStatus.INVALID_ARGUMENT]: 'invalid_request',
  [GrpcStatus.NOT_FOUND]: 'resource_not_found',
  [GrpcStatus.PERMISSION_DENIED]: 'not_authorized',
  [GrpcStatus.UNAUTHENTICATED]: 'authentication_required',
  [GrpcStatus.ABORTED]: 'conflict',
  [GrpcStatus.ALREADY_EXISTS]: 'conflict',
  [GrpcStatus.UNIMPLEMENTED]: 'operation_not_supported',
  [GrpcStatus.RESOURCE_EXHAUSTED]: 'rate_limited',
  [GrpcStatus.UNAVAILABLE]: 'resource_unavailable',
  [GrpcStatus.DEADLINE_EXCEEDED]: 'resource_unavailable',
};

/** Client side: the one mapping from a gRPC failure back to an AppError (and so to an HTTP body). */
export function fromGrpcError(err: ServiceError): AppError {
  const code = err.metadata?.get(CODE_KEY)[0];
  if (isErrorCode(code)) {
    const raw = err.metadata.get(DETAILS_KEY)[0];
    const details = typeof raw === 'string' ? (JSON.parse(raw) as Record<string, unknown>) : undefined;
    const http = Number(err.metadata.get(HTTP_KEY)[0]);
    return new AppError(code, err.details, {
      details,
      httpStatus: Number.isFinite(http) && http > 0 ? http : undefined,
    });
  }
  const fallback = FALLBACK_BY_STATUS[err.code as GrpcStatus] ?? 'internal_error';
  // No answer from the orchestrator at all (down, restarting, or past the deadline): the retryable 503.
  if (fallback === 'resource_unavailable')
    return new AppError(fallback, outageMessage('orchestrator'), {
      cause: err,
      details: { retry_after_seconds: 1 },
    });
  const message = fallback === 'internal_error' ? 'An unexpected error occurred' : err.details || fallback;
  return new AppError(fallback, message, { cause: err });
}
