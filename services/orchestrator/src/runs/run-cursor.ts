import { AppError } from '@conveyor/errors';

/** Opaque keyset cursor: the sort it was made for plus the last row's sort value and ID (a stable tiebreak). */
export interface RunCursor {
  sortBy: string;
  sortOrder: 'asc' | 'desc';
  value: string | null;
  id: string;
}

export function encodeRunCursor(cursor: RunCursor): string {
  return Buffer.from(JSON.stringify([cursor.sortBy, cursor.sortOrder, cursor.value, cursor.id])).toString('base64url');
}

export function decodeRunCursor(raw: string, expected: { sortBy: string; sortOrder: 'asc' | 'desc' }): RunCursor {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
  } catch {
    parsed = undefined;
  }
  if (
    !Array.isArray(parsed) ||
    parsed.length !== 4 ||
    typeof parsed[0] !== 'string' ||
    (parsed[1] !== 'asc' && parsed[1] !== 'desc') ||
    (typeof parsed[2] !== 'string' && parsed[2] !== null) ||
    typeof parsed[3] !== 'string'
  ) {
    throw new AppError('invalid_request', 'cursor is malformed');
  }
  const cursor: RunCursor = { sortBy: parsed[0], sortOrder: parsed[1], value: parsed[2], id: parsed[3] };
  if (cursor.sortBy !== expected.sortBy || cursor.sortOrder !== expected.sortOrder) {
    throw new AppError('invalid_request', 'cursor was issued for a different sort_by/sort_order');
  }
  return cursor;
}
