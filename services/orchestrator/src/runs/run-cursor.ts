import { AppError } from '@conveyor/errors';

/**
 * Opaque keyset cursor: the sort it was made for plus the last row's sort value and ID (a stable tiebreak).
 * `value` is an ISO timestamp for updated_at/created_at, the title for title, and for agent the skill spec,
 * or null once the page boundary is among the runs without a skill (they come last in both directions).
 */
export interface RunCursor {
  sortBy: string;
  sortOrder: 'asc' | 'desc';
  value: string | null;
  id: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export function encodeRunCursor(cursor: RunCursor): string {
  return Buffer.from(JSON.stringify([cursor.sortBy, cursor.sortOrder, cursor.value, cursor.id])).toString(
    'base64url',
  );
}

const malformed = () => new AppError('invalid_request', 'cursor is malformed');

export function decodeRunCursor(
  raw: string,
  expected: { sortBy: string; sortOrder: 'asc' | 'desc' },
): RunCursor {
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
    throw malformed();
  }
  const cursor: RunCursor = { sortBy: parsed[0], sortOrder: parsed[1], value: parsed[2], id: parsed[3] };
  if (cursor.sortBy !== expected.sortBy || cursor.sortOrder !== expected.sortOrder) {
    throw new AppError('invalid_request', 'cursor was issued for a different sort_by/sort_order');
  }
  // The values end up as SQL parameters cast to uuid/timestamptz: refuse anything that would not cast.
  if (!UUID.test(cursor.id)) throw malformed();
  const timestamp = cursor.sortBy === 'updated_at' || cursor.sortBy === 'created_at';
  if (
    timestamp &&
    (cursor.value === null || !ISO_TIMESTAMP.test(cursor.value) || Number.isNaN(Date.parse(cursor.value)))
  )
    throw malformed();
  if (cursor.sortBy === 'title' && cursor.value === null) throw malformed();
  return cursor;
}
