import { Metadata, status as GrpcStatus } from '@grpc/grpc-js';
import { outageOf } from './dependency-outage';
import { fromGrpcError } from './grpc';
import { asAppError, toProblem } from './problem';

/** An error shaped like `name` with the given fields (the shapes below were recorded from the real clients). */
const shaped = (name: string, message: string, fields: Record<string, unknown> = {}) =>
  Object.assign(new Error(message), { name, ...fields });

const driverError = (cause: Record<string, unknown>) => ({ driverAdapterError: { cause } });

describe('outageOf', () => {
  it.each([
    // A query while PostgreSQL is stopped: Prisma on @prisma/adapter-pg.
    ['P1001', shaped('PrismaClientKnownRequestError', "Can't reach database server", { code: 'P1001' })],
    [
      'a raw query on an unreachable server (P2010)',
      shaped('PrismaClientKnownRequestError', 'Raw query failed', {
        code: 'P2010',
        meta: driverError({ kind: 'DatabaseNotReachable' }),
      }),
    ],
    [
      'a pooled connection the stopping server terminated (57P01)',
      shaped('PrismaClientKnownRequestError', 'Raw query failed', {
        code: 'P2010',
        meta: driverError({ kind: 'postgres', originalCode: '57P01' }),
      }),
    ],
    [
      'P1017',
      shaped('PrismaClientKnownRequestError', 'Server has closed the connection.', { code: 'P1017' }),
    ],
    [
      'P2024',
      shaped('PrismaClientKnownRequestError', 'Timed out fetching a new connection', { code: 'P2024' }),
    ],
    // node-postgres' DatabaseError is named after the protocol message ('error'); the server's severity says it is one.
    [
      'node-postgres while starting up',
      shaped('error', 'the database system is starting up', { code: '57P03', severity: 'FATAL' }),
    ],
    [
      'a node-postgres connection the stopping server terminated',
      shaped('error', 'terminating connection due to administrator command', {
        code: '57P01',
        severity: 'FATAL',
      }),
    ],
    ['a node-postgres connection lost mid-query', shaped('Error', 'Connection terminated unexpectedly')],
  ])('is postgres for %s', (_, err) => {
    expect(outageOf(err)).toBe('postgres');
  });

  it.each([
    ['no offline queue', new Error("Stream isn't writeable and enableOfflineQueue options is false")],
    [
      'max retries',
      shaped('MaxRetriesPerRequestError', 'Reached the max retries per request limit (which is 1).'),
    ],
    ['a closed connection', new Error('Connection is closed.')],
  ])('is redis for %s', (_, err) => {
    expect(outageOf(err)).toBe('redis');
  });

  it('is the orchestrator for gRPC UNAVAILABLE and DEADLINE_EXCEEDED, kafka and network by their names', () => {
    const grpcError = (code: GrpcStatus) =>
      Object.assign(new Error('14 UNAVAILABLE'), {
        code,
        details: 'No connection established',
        metadata: new Metadata(),
      });
    expect(outageOf(grpcError(GrpcStatus.UNAVAILABLE))).toBe('orchestrator');
    expect(outageOf(grpcError(GrpcStatus.DEADLINE_EXCEEDED))).toBe('orchestrator');
    expect(outageOf(grpcError(GrpcStatus.INTERNAL))).toBeUndefined();
    expect(outageOf(shaped('KafkaJSConnectionError', 'Connection error: connect ECONNREFUSED'))).toBe(
      'kafka',
    );
    expect(outageOf(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }))).toBe(
      'network',
    );
    // Through a wrapper's cause.
    expect(outageOf(new Error('relay failed', { cause: new Error('Connection is closed.') }))).toBe('redis');
  });

  it('is nothing for bugs and refusals', () => {
    expect(outageOf(new TypeError("Cannot read properties of undefined (reading 'id')"))).toBeUndefined();
    expect(
      outageOf(shaped('PrismaClientKnownRequestError', 'Unique constraint failed', { code: 'P2002' })),
    ).toBeUndefined();
    expect(
      outageOf(
        shaped('PrismaClientKnownRequestError', 'Raw query failed', {
          code: 'P2010',
          meta: driverError({ kind: 'postgres', originalCode: '42601' }),
        }),
      ),
    ).toBeUndefined();
    expect(outageOf(shaped('error', 'syntax error', { code: '42601', severity: 'ERROR' }))).toBeUndefined();
    // An SQLSTATE-looking code on something that is not a server's error.
    expect(outageOf(shaped('Error', 'x', { code: '08001' }))).toBeUndefined();
    expect(outageOf(undefined)).toBeUndefined();
  });
});

describe('an outage as the API answers it', () => {
  it('is the retryable 503 resource_unavailable, naming what is down and nothing of the driver', () => {
    const problem = toProblem(
      asAppError(
        shaped('PrismaClientKnownRequestError', "Can't reach database server at 127.0.0.1:5432", {
          code: 'P1001',
        }),
      ),
    );
    expect(problem).toMatchObject({
      status: 503,
      retryable: true,
      detail: 'The database is temporarily unavailable; retry',
      retry_after_seconds: 1,
    });
    expect(JSON.stringify(problem)).not.toContain('127.0.0.1');
    const noOrchestrator = fromGrpcError(
      Object.assign(new Error('14 UNAVAILABLE'), {
        code: GrpcStatus.UNAVAILABLE,
        details: 'No connection established. Last error: connect ECONNREFUSED 127.0.0.1:50051',
        metadata: new Metadata(),
      }),
    );
    expect(toProblem(noOrchestrator)).toMatchObject({ status: 503, retryable: true });
    expect(noOrchestrator.message).not.toContain('ECONNREFUSED');
  });
});
