import { status as GrpcStatus } from '@grpc/grpc-js';
import { ERROR_TABLE, toGrpcError } from '@conveyor/errors';
import pg from 'pg';
import { toAppError } from './database-errors';

/** A server's error as node-postgres' protocol parser builds it (pg-protocol parser.ts: name 'error', not the class's). */
const serverError = (code: string, message: string, severity = 'FATAL') =>
  Object.assign(new pg.DatabaseError(message, message.length, 'error'), { code, severity });

const socketError = (code: string) => Object.assign(new Error(`connect ${code} 127.0.0.1:5432`), { code });

const prismaError = (code: string) =>
  Object.assign(new Error('x'), { name: 'PrismaClientKnownRequestError', code });

describe('toAppError', () => {
  it('maps database races and pool exhaustion to typed API errors', () => {
    expect(toAppError(prismaError('P2025')).code).toBe('resource_not_found');
    expect(toAppError(prismaError('P2002')).code).toBe('conflict');
    expect(toAppError(prismaError('P2028')).code).toBe('resource_unavailable');
  });

  it('answers an unreachable database as the retryable resource_unavailable (gRPC UNAVAILABLE), not a 500', () => {
    for (const code of ['P1001', 'P1017', 'P2024']) {
      const err = toAppError(prismaError(code));
      expect([err.code, err.retryable, err.httpStatus]).toEqual(['resource_unavailable', true, 503]);
    }
  });

  // The one-statement paths (sqlPool: claim, event batches, completion) get node-postgres' own errors, not Prisma's.
  it.each([
    ['57P01', serverError('57P01', 'terminating connection due to administrator command')],
    ['57P02', serverError('57P02', 'terminating connection due to crash of another server process')],
    ['57P03', serverError('57P03', 'the database system is shutting down')],
    ['08006', serverError('08006', 'connection failure', 'ERROR')],
    ['08P01', serverError('08P01', 'invalid startup packet layout', 'ERROR')],
    ['a connection lost mid-query', new Error('Connection terminated unexpectedly')],
    [
      'a client whose connection failed',
      new Error('Client has encountered a connection error and is not queryable'),
    ],
    ['a connect that timed out', new Error('timeout exceeded when trying to connect')],
    ['ECONNREFUSED', socketError('ECONNREFUSED')],
    ['ECONNRESET', socketError('ECONNRESET')],
  ])(
    'answers node-postgres %s as resource_unavailable: gRPC UNAVAILABLE, HTTP 503, nothing of the driver',
    (_, raw) => {
      const err = toAppError(raw);
      expect([err.code, err.retryable, err.httpStatus]).toEqual(['resource_unavailable', true, 503]);
      expect(toGrpcError(err).code).toBe(GrpcStatus.UNAVAILABLE);
      expect(ERROR_TABLE[err.code].grpc).toBe(GrpcStatus.UNAVAILABLE);
      expect(err.message).not.toContain((raw as Error).message);
    },
  );

  it('keeps a statement the server refused for what it says internal', () => {
    expect(toAppError(serverError('42601', 'syntax error at or near "SELEC"', 'ERROR')).code).toBe(
      'internal_error',
    );
    expect(
      toAppError(serverError('23505', 'duplicate key value violates unique constraint', 'ERROR')).code,
    ).toBe('internal_error');
  });

  it('keeps anything else internal', () => {
    expect(toAppError(prismaError('P9999')).code).toBe('internal_error');
    expect(toAppError(new Error('boom')).code).toBe('internal_error');
  });
});
