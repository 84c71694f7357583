import { status as GrpcStatus } from '@grpc/grpc-js';

/** Stable error codes of the public API (contract §0.8) plus a few internal ones. */
export const ErrorCodes = [
  'insufficient_credits',
  'feature_not_available',
  'external_authentication_required',
  'not_authorized',
  'invalid_request',
  'resource_not_found',
  'budget_exceeded',
  'integration_disabled',
  'integration_not_configured',
  'operation_not_supported',
  'environment_setup_failed',
  'content_policy_violation',
  'conflict',
  'authentication_required',
  'resource_unavailable',
  'internal_error',
  'payload_too_large',
  'rate_limited',
  'method_not_allowed',
] as const;

export type ErrorCode = (typeof ErrorCodes)[number];

interface CodeInfo {
  http: number;
  grpc: GrpcStatus;
  title: string;
  retryable: boolean;
}

/** The one table mapping each code to its HTTP status and gRPC status. */
export const ERROR_TABLE: Record<ErrorCode, CodeInfo> = {
  insufficient_credits: {
    http: 403,
    grpc: GrpcStatus.PERMISSION_DENIED,
    title: 'Insufficient credits',
    retryable: false,
  },
  feature_not_available: {
    http: 403,
    grpc: GrpcStatus.PERMISSION_DENIED,
    title: 'Feature not available',
    retryable: false,
  },
  external_authentication_required: {
    http: 401,
    grpc: GrpcStatus.UNAUTHENTICATED,
    title: 'External authentication required',
    retryable: false,
  },
  not_authorized: {
    http: 403,
    grpc: GrpcStatus.PERMISSION_DENIED,
    title: 'Not authorized',
    retryable: false,
  },
  invalid_request: {
    http: 400,
    grpc: GrpcStatus.INVALID_ARGUMENT,
    title: 'Invalid request',
    retryable: false,
  },
  resource_not_found: {
    http: 404,
    grpc: GrpcStatus.NOT_FOUND,
    title: 'Resource not found',
    retryable: false,
  },
  budget_exceeded: {
    http: 403,
    grpc: GrpcStatus.PERMISSION_DENIED,
    title: 'Budget exceeded',
    retryable: false,
  },
  integration_disabled: {
    http: 403,
    grpc: GrpcStatus.FAILED_PRECONDITION,
    title: 'Integration disabled',
    retryable: false,
  },
  integration_not_configured: {
    http: 400,
    grpc: GrpcStatus.FAILED_PRECONDITION,
    title: 'Integration not configured',
    retryable: false,
  },
  operation_not_supported: {
    http: 422,
    grpc: GrpcStatus.UNIMPLEMENTED,
    title: 'Operation not supported',
    retryable: false,
  },
  environment_setup_failed: {
    http: 500,
    grpc: GrpcStatus.INTERNAL,
    title: 'Environment setup failed',
    retryable: false,
  },
  content_policy_violation: {
    http: 403,
    grpc: GrpcStatus.PERMISSION_DENIED,
    title: 'Content policy violation',
    retryable: false,
  },
  conflict: { http: 409, grpc: GrpcStatus.ABORTED, title: 'Conflict', retryable: true },
  authentication_required: {
    http: 401,
    grpc: GrpcStatus.UNAUTHENTICATED,
    title: 'Authentication required',
    retryable: false,
  },
  resource_unavailable: {
    http: 503,
    grpc: GrpcStatus.UNAVAILABLE,
    title: 'Resource unavailable',
    retryable: true,
  },
  internal_error: { http: 500, grpc: GrpcStatus.INTERNAL, title: 'Internal error', retryable: true },
  payload_too_large: {
    http: 413,
    grpc: GrpcStatus.OUT_OF_RANGE,
    title: 'Payload too large',
    retryable: false,
  },
  rate_limited: {
    http: 429,
    grpc: GrpcStatus.RESOURCE_EXHAUSTED,
    title: 'Too many requests',
    retryable: true,
  },
  method_not_allowed: {
    http: 405,
    grpc: GrpcStatus.UNIMPLEMENTED,
    title: 'Method not allowed',
    retryable: false,
  },
};

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && (ErrorCodes as readonly string[]).includes(value);
}
