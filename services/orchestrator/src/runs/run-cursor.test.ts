import { decodeRunCursor, encodeRunCursor } from './run-cursor';

describe('run cursor', () => {
  const cursor = { sortBy: 'updated_at', sortOrder: 'desc' as const, value: '2026-11-22T10:00:00.000Z', id: 'r1' };

  it('round-trips', () => {
    expect(decodeRunCursor(encodeRunCursor(cursor), cursor)).toEqual(cursor);
  });

  it('rejects garbage and cursors for another sort', () => {
    expect(() => decodeRunCursor('%%%', cursor)).toThrow(/malformed/);
    expect(() => decodeRunCursor(Buffer.from('[1,2]').toString('base64url'), cursor)).toThrow(/malformed/);
    expect(() => decodeRunCursor(encodeRunCursor(cursor), { sortBy: 'created_at', sortOrder: 'desc' })).toThrow(/different sort/);
  });
});
