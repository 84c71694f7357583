import { readMigrations } from '@conveyor/db';
import { Client } from 'pg';
import { DATABASE_URL } from './infra-env';
import { createTestDatabase, type TestDatabase } from './test-database';

async function query<T extends object>(url: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

describe('createTestDatabase', () => {
  const created: TestDatabase[] = [];

  afterAll(async () => {
    await Promise.all(created.map((db) => db.drop()));
  });

  it('creates distinct, fully migrated databases that do not see each other', async () => {
    const [a, b] = await Promise.all([createTestDatabase(), createTestDatabase()]);
    if (!a || !b) throw new Error('expected two databases');
    created.push(a, b);
    expect(a.name).toMatch(/^conveyor_test_[0-9a-f]{16}$/);
    expect(a.name).not.toBe(b.name);
    expect(a.url).not.toBe(b.url);

    const migrations = readMigrations().map((m) => m.name);
    for (const db of [a, b]) {
      const rows = await query<{ migration_name: string }>(
        db.url,
        'SELECT migration_name FROM "_prisma_migrations" WHERE finished_at IS NOT NULL ORDER BY migration_name',
      );
      expect(rows.map((r) => r.migration_name)).toEqual(migrations);
    }

    await query(a.url, `INSERT INTO "Team" (id, name) VALUES ('team_a', 'only in a')`);
    expect(await query(a.url, 'SELECT id FROM "Team"')).toEqual([{ id: 'team_a' }]);
    expect(await query(b.url, 'SELECT id FROM "Team"')).toEqual([]);
  });

  it('drop() terminates open connections, removes the database and can be repeated', async () => {
    const db = await createTestDatabase();
    created.push(db);
    const lingering = new Client({ connectionString: db.url });
    lingering.on('error', () => undefined); // the forced drop kills this session; that is the point
    await lingering.connect();

    await db.drop();
    await db.drop();
    const left = await query(DATABASE_URL, 'SELECT 1 FROM pg_database WHERE datname = $1', [db.name]);
    expect(left).toEqual([]);
    await lingering.end().catch(() => undefined);
  });
});
