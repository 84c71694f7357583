import { AppError } from '@conveyor/errors';
import type { Prisma, PrismaClient } from '@conveyor/db';
import type { Caller__Output, ListRunsRequest__Output, ListRunsResponse } from '@conveyor/proto';
import { decodeRunCursor, encodeRunCursor } from './run-cursor';
import { runToProto } from './run-to-proto';

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;

const SORT_COLUMNS = { updated_at: 'updatedAt', created_at: 'createdAt' } as const;
type SortBy = keyof typeof SORT_COLUMNS;

/** Keyset pagination on (sort column, id): pages stay stable while new runs are being created. */
export async function listRuns(db: PrismaClient, caller: Caller__Output, request: ListRunsRequest__Output): Promise<ListRunsResponse> {
  const sortBy = (request.sort_by || 'updated_at') as SortBy;
  if (!(sortBy in SORT_COLUMNS)) throw new AppError('invalid_request', `sort_by must be one of ${Object.keys(SORT_COLUMNS).join(', ')}`);
  const sortOrder = (request.sort_order || 'desc') as 'asc' | 'desc';
  if (sortOrder !== 'asc' && sortOrder !== 'desc') throw new AppError('invalid_request', 'sort_order must be asc or desc');
  const limit = request.limit || DEFAULT_LIMIT;
  if (limit < 1 || limit > MAX_LIMIT) throw new AppError('invalid_request', `limit must be between 1 and ${MAX_LIMIT}`);

  const column = SORT_COLUMNS[sortBy];
  const where: Prisma.RunWhereInput[] = [{ teamId: caller.team_id }];
  if (request.cursor) {
    const cursor = decodeRunCursor(request.cursor, { sortBy, sortOrder });
    const value = new Date(cursor.value ?? 0);
    const cmp = sortOrder === 'desc' ? 'lt' : 'gt';
    where.push({ OR: [{ [column]: { [cmp]: value } }, { [column]: value, id: { [cmp]: cursor.id } }] });
  }
  const rows = await db.run.findMany({
    where: { AND: where },
    orderBy: [{ [column]: sortOrder }, { id: sortOrder }],
    take: limit + 1,
  });
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  const hasNext = rows.length > limit && last !== undefined;
  return {
    runs: page.map(runToProto),
    has_next_page: hasNext,
    next_cursor: hasNext ? encodeRunCursor({ sortBy, sortOrder, value: last[column].toISOString(), id: last.id }) : '',
  };
}
