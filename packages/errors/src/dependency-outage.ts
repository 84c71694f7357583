/** The dependencies whose absence is an outage (retry later), not a bug. */
export type Dependency = 'postgres' | 'redis' | 'kafka' | 'orchestrator' | 'network';

/**
 * Prisma's codes for a database it cannot use right now: unreachable (P1001), timed out connecting (P1002) or
 * operating (P1008), connection closed (P1017), no pool connection in time (P2024), too many connections (P2037).
 */
const PRISMA_OUTAGE_CODES = new Set(['P1001', 'P1002', 'P1008', 'P1017', 'P2024', 'P2037']);

/** What @prisma/adapter-pg reports for a connection it lost or never got (its DriverAdapterError kinds). */
const DRIVER_OUTAGE_KINDS = new Set([
  'DatabaseNotReachable',
  'ConnectionClosed',
  'SocketTimeout',
  'TooManyConnections',
  'TlsConnectionError',
]);

/**
 * PostgreSQL SQLSTATEs of a server going away or not there yet: class 08 (connection exception), 57P01-57P03
 * (administrator/crash shutdown, starting up), 53300 (too many connections).
 */
const PG_OUTAGE_STATE = /^(08|57P0[1-3]$|53300$)/;

/**
 * What node-postgres throws for a connection lost mid-query ("Connection terminated unexpectedly"), ended by a
 * timeout, a connect that timed out, or a query on a client whose connection already failed (plain Errors, no code).
 */
const PG_CONNECTION_MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error and is not queryable',
];

/** Node's socket errors: whoever was called is not reachable. */
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/** ioredis and BullMQ: a command that could not be sent or answered because the connection is down. */
const REDIS_OUTAGE_MESSAGES = [
  "Stream isn't writeable",
  'Connection is closed',
  'Reached the max retries per request limit',
  'OOM command not allowed',
  'LOADING Redis is loading',
];

const KAFKA_OUTAGE_NAMES = new Set([
  'KafkaJSConnectionError',
  'KafkaJSConnectionClosedError',
  'KafkaJSRequestTimeoutError',
  'KafkaJSBrokerNotFound',
  'KafkaJSNumberOfRetriesExceeded',
]);

/** gRPC UNAVAILABLE (14) and DEADLINE_EXCEEDED (4): the orchestrator is not answering. */
const GRPC_OUTAGE_STATUSES = new Set([4, 14]);

interface ErrorLike {
  name?: unknown;
  code?: unknown;
  message?: unknown;
  kind?: unknown;
  severity?: unknown;
  details?: unknown;
  metadata?: unknown;
  meta?: { driverAdapterError?: { cause?: { kind?: unknown; originalCode?: unknown } } };
  cause?: unknown;
}

function classify(e: ErrorLike): Dependency | undefined {
  const name = typeof e.name === 'string' ? e.name : '';
  const code = typeof e.code === 'string' ? e.code : undefined;
  const message = typeof e.message === 'string' ? e.message : '';
  if (name.startsWith('PrismaClient')) {
    if (code && PRISMA_OUTAGE_CODES.has(code)) return 'postgres';
    if (name === 'PrismaClientInitializationError') return 'postgres';
    const driver = e.meta?.driverAdapterError?.cause;
    if (typeof driver?.kind === 'string' && DRIVER_OUTAGE_KINDS.has(driver.kind)) return 'postgres';
    if (typeof driver?.originalCode === 'string' && PG_OUTAGE_STATE.test(driver.originalCode))
      return 'postgres';
    return undefined;
  }
  // node-postgres (the sqlPool statements, LISTEN connections, migrations): its DatabaseError carries the SQLSTATE as
  // its code and the server's severity; its name is the protocol message's ('error'), not the class's.
  if (typeof e.severity === 'string' && code && PG_OUTAGE_STATE.test(code)) return 'postgres';
  // node-postgres' own connection failures (the runner hot path's statements go straight to its pool).
  if (PG_CONNECTION_MESSAGES.some((m) => message.startsWith(m))) return 'postgres';
  if (name === 'MaxRetriesPerRequestError' || name === 'ConnectionClosedError') return 'redis';
  if (REDIS_OUTAGE_MESSAGES.some((m) => message.startsWith(m))) return 'redis';
  if (KAFKA_OUTAGE_NAMES.has(name)) return 'kafka';
  // A grpc-js ServiceError: a numeric status with details and metadata.
  if (typeof e.code === 'number' && 'metadata' in e && 'details' in e && GRPC_OUTAGE_STATUSES.has(e.code))
    return 'orchestrator';
  if (code && SOCKET_CODES.has(code)) return 'network';
  return undefined;
}

/**
 * Which dependency's outage `err` is (following its causes), or undefined when it is something else. The one place
 * that decides a failure is "try again later" rather than a bug: requests answer it with 503 `resource_unavailable`
 * (retryable), background loops back off on it.
 */
export function outageOf(err: unknown): Dependency | undefined {
  let current: unknown = err;
  for (let depth = 0; depth < 5 && current && typeof current === 'object'; depth++) {
    const found = classify(current as ErrorLike);
    if (found) return found;
    current = (current as ErrorLike).cause;
  }
  return undefined;
}

const WHAT: Record<Dependency, string> = {
  postgres: 'The database is temporarily unavailable; retry',
  redis: 'The queue store is temporarily unavailable; retry',
  kafka: 'The delivery log is temporarily unavailable; retry',
  orchestrator: 'The platform is temporarily unavailable; retry',
  network: 'A service the request needs is temporarily unavailable; retry',
};

/** The message a request gets for an outage: what is down, never the driver's text. */
export const outageMessage = (dependency: Dependency): string => WHAT[dependency];
