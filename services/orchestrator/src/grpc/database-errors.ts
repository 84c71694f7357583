import { AppError, asAppError } from '@conveyor/errors';

/**
 * Database failures no handler caught, as the API's typed errors instead of a bare 500: a row that vanished between
 * read and write (a concurrent delete) is gone, a unique key taken by a concurrent writer is a conflict, and a
 * connection pool too busy to start a transaction is a transient outage. Anything else stays internal.
 */
const BY_PRISMA_CODE: Record<string, () => AppError> = {
  P2025: () => new AppError('resource_not_found', 'The resource no longer exists'),
  P2002: () => new AppError('conflict', 'A concurrent request changed the same resource; retry'),
  P2028: () =>
    new AppError('resource_unavailable', 'The database is busy; retry', {
      details: { retry_after_seconds: 1 },
    }),
};

export function toAppError(err: unknown): AppError {
  const prisma = err as { name?: string; code?: string } | null;
  const mapped =
    prisma?.name === 'PrismaClientKnownRequestError' && prisma.code ? BY_PRISMA_CODE[prisma.code] : undefined;
  return mapped ? mapped() : asAppError(err);
}
