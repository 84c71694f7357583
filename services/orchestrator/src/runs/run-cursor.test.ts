import { decodeRunCursor, encodeRunCursor } from './run-cursor';

describe('run cursor', () => {
  const id = '0b7d9c3e-5f6a-4b1c-8d2e-3f4a5b6c7d8e';
  const cursor = { sortBy: 'updated_at', sortOrder: 'desc' as const, value: '2026-11-22T10:00:00.000Z', id };

  it('round-trips for every sort, including the no-skill section of the agent sort', () => {
    expect(decodeRunCursor(encodeRunCursor(cursor), cursor)).toEqual(cursor);
    const title = { sortBy: 'title', sortOrder: 'asc' as const, value: 'Fix the "build" ✓', id };
    expect(decodeRunCursor(encodeRunCursor(title), title)).toEqual(title);
    for (const value of ['acme/api:.claude/skills/deploy/SKILL.md', null]) {
      const agent = { sortBy: 'agent', sortOrder: 'desc' as const, value, id };
      expect(decodeRunCursor(encodeRunCursor(agent), agent)).toEqual(agent);
    }
  });

  it('is opaque: URL-safe base64 without padding', () => {
    expect(encodeRunCursor(cursor)).toMatch(/^[A-Za-z0-9_-]+$/);
  });

  it('rejects garbage and cursors for another sort', () => {
    expect(() => decodeRunCursor('%%%', cursor)).toThrow(/malformed/);
    expect(() => decodeRunCursor(Buffer.from('[1,2]').toString('base64url'), cursor)).toThrow(/malformed/);
    expect(() =>
      decodeRunCursor(encodeRunCursor(cursor), { sortBy: 'created_at', sortOrder: 'desc' }),
    ).toThrow(/different sort/);
    expect(() =>
      decodeRunCursor(encodeRunCursor(cursor), { sortBy: 'updated_at', sortOrder: 'asc' }),
    ).toThrow(/different sort/);
  });

  it('rejects values that could not be compared: bad IDs, timestamps and null titles', () => {
    const bad = [
      { ...cursor, id: 'not-a-uuid' },
      { ...cursor, value: 'yesterday' },
      { ...cursor, value: null },
      { ...cursor, sortBy: 'title', value: null },
    ];
    for (const c of bad) expect(() => decodeRunCursor(encodeRunCursor(c), c)).toThrow(/malformed/);
  });
});
