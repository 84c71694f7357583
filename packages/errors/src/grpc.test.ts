import { status as GrpcStatus, type ServiceError, Metadata } from '@grpc/grpc-js';
import { AppError } from './app-error';
import { fromGrpcError, toGrpcError } from './grpc';
import { asAppError, toProblem } from './problem';

const asServiceError = (partial: Partial<ServiceError>): ServiceError =>
  Object.assign(
    new Error(partial.details ?? ''),
    { code: GrpcStatus.UNKNOWN, details: '', metadata: new Metadata() },
    partial,
  ) as ServiceError;

describe('gRPC error mapping', () => {
  it('round-trips code, message, details and HTTP status', () => {
    const original = new AppError('resource_unavailable', 'queue full', {
      details: { queue: 'runs' },
      httpStatus: 429,
    });
    const back = fromGrpcError(asServiceError(toGrpcError(original)));
    expect(back.code).toBe('resource_unavailable');
    expect(back.message).toBe('queue full');
    expect(back.details).toEqual({ queue: 'runs' });
    expect(back.httpStatus).toBe(429);
  });

  it('carries details that echo non-ASCII input (found by Schemathesis: grpc-js used to throw and crash the server)', () => {
    const details = { errors: [{ file: 'webhooks/ûr\u0012ü😀.yaml', message: 'bad name' }] };
    const back = fromGrpcError(
      asServiceError(toGrpcError(new AppError('invalid_request', 'bad', { details }))),
    );
    expect(back.details).toEqual(details);
  });

  it('maps transport failures without our metadata by gRPC status', () => {
    expect(
      fromGrpcError(asServiceError({ code: GrpcStatus.UNAVAILABLE, details: 'No connection' })).code,
    ).toBe('resource_unavailable');
    const internal = fromGrpcError(
      asServiceError({ code: GrpcStatus.INTERNAL, details: 'stack trace here' }),
    );
    expect(internal.code).toBe('internal_error');
    expect(internal.message).not.toContain('stack');
  });
});

describe('problem body', () => {
  it('follows the contract shape', () => {
    const body = toProblem(new AppError('invalid_request', 'limit must be positive'), '/api/v1/agent/runs');
    expect(body).toEqual({
      type: 'https://docs.warp.dev/reference/api-and-sdk/troubleshooting/errors/invalid_request',
      title: 'Invalid request',
      status: 400,
      error: 'Invalid request (limit must be positive)',
      detail: 'limit must be positive',
      retryable: false,
      instance: '/api/v1/agent/runs',
    });
  });

  it('hides unknown errors behind a generic 500', () => {
    const body = toProblem(asAppError(new Error('db password is hunter2')));
    expect(body.status).toBe(500);
    expect(JSON.stringify(body)).not.toContain('hunter2');
  });
});
