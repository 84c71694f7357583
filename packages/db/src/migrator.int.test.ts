import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { MigrationError } from './errors';
import { readMigrations, sha256Hex } from './migration-files';
import { migrate, migrationsDir } from './migrator';
import { createScratchDatabase, withClient, type ScratchDatabase } from './test-support/scratch-database';

describe('migrate (real migrations)', () => {
  let db: ScratchDatabase;

  beforeEach(async () => {
    db = await createScratchDatabase('migrator');
  });

  afterEach(async () => {
    await db.drop();
  });

  it('applies every migration once, with Prisma-compatible bookkeeping', async () => {
    const logs: string[] = [];
    const first = await migrate(db.url, {
      log: (msg, fields) => logs.push(`${msg} ${JSON.stringify(fields)}`),
    });
    const names = readMigrations().map((m) => m.name);
    expect(first).toEqual({ applied: names, alreadyApplied: 0 });
    expect(logs.some((l) => l.startsWith('applied migration') && l.includes(names[0] ?? '?'))).toBe(true);

    const rows = await withClient(db.url, async (c) => {
      const result = await c.query(
        'SELECT id, checksum, migration_name, finished_at, applied_steps_count FROM "_prisma_migrations"',
      );
      return result.rows;
    });
    const initSql = readFileSync(path.join(migrationsDir, '20261122000000_init', 'migration.sql'));
    expect(rows).toContainEqual(
      expect.objectContaining({
        migration_name: '20261122000000_init',
        checksum: sha256Hex(initSql),
        finished_at: expect.any(Date),
        applied_steps_count: 1,
      }),
    );
    expect(rows[0]?.id).toHaveLength(36);

    expect(await migrate(db.url)).toEqual({ applied: [], alreadyApplied: names.length });
  });

  it('lets concurrent starters race: each migration is applied exactly once', async () => {
    const results = await Promise.all([migrate(db.url), migrate(db.url), migrate(db.url)]);
    const appliedTotal = results.flatMap((r) => r.applied);
    expect(appliedTotal).toEqual(readMigrations().map((m) => m.name));
    const count = await withClient(db.url, (c) =>
      c.query('SELECT count(*)::int AS n FROM "_prisma_migrations"'),
    );
    expect(count.rows[0]?.n).toBe(readMigrations().length);
  });

  it('installs pg_trgm for trigram indexes', async () => {
    await migrate(db.url);
    const ext = await withClient(db.url, (c) =>
      c.query("SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm'"),
    );
    expect(ext.rowCount).toBe(1);
  });
});

describe('migrate (fixture migrations)', () => {
  let db: ScratchDatabase;
  let dir: string;

  function writeMigration(name: string, sql: string): void {
    mkdirSync(path.join(dir, name), { recursive: true });
    writeFileSync(path.join(dir, name, 'migration.sql'), sql);
  }

  async function migrationError(promise: Promise<unknown>): Promise<MigrationError> {
    const err = await promise.then(
      () => undefined,
      (e: unknown) => e,
    );
    if (!(err instanceof MigrationError)) throw new Error(`expected a MigrationError, got ${String(err)}`);
    return err;
  }

  beforeEach(async () => {
    db = await createScratchDatabase('migfix');
    dir = mkdtempSync(path.join(tmpdir(), 'conveyor-migrations-'));
    writeFileSync(path.join(dir, 'migration_lock.toml'), 'provider = "postgresql"\n');
  });

  afterEach(async () => {
    await db.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('applies in name order and refuses an applied migration whose file changed', async () => {
    writeMigration('002_b', 'CREATE TABLE b (id int REFERENCES a(id));');
    writeMigration('001_a', 'CREATE TABLE a (id int PRIMARY KEY);');
    expect(await migrate(db.url, { migrationsDir: dir })).toEqual({
      applied: ['001_a', '002_b'],
      alreadyApplied: 0,
    });

    writeMigration('001_a', 'CREATE TABLE a (id bigint PRIMARY KEY);');
    const err = await migrationError(migrate(db.url, { migrationsDir: dir }));
    expect(err.code).toBe('CHECKSUM_MISMATCH');
    expect(err.migrationName).toBe('001_a');
    expect(err.message).toMatch(/modified after it was applied/);
  });

  it('rolls a failed migration back entirely, then applies it once fixed', async () => {
    writeMigration('001_ok', 'CREATE TABLE ok (id int);');
    writeMigration('002_bad', 'CREATE TABLE half (id int);\nSELECT 1/0;');
    const err = await migrationError(migrate(db.url, { migrationsDir: dir }));
    expect(err.code).toBe('MIGRATION_FAILED');
    expect(err.migrationName).toBe('002_bad');
    expect(err.message).toMatch(/division by zero/);

    const state = await withClient(db.url, async (c) => ({
      half: (await c.query("SELECT to_regclass('half') AS t")).rows[0]?.t,
      names: (await c.query('SELECT migration_name FROM "_prisma_migrations"')).rows.map(
        (r) => r.migration_name,
      ),
    }));
    expect(state).toEqual({ half: null, names: ['001_ok'] });

    writeMigration('002_bad', 'CREATE TABLE half (id int);');
    expect(await migrate(db.url, { migrationsDir: dir })).toEqual({
      applied: ['002_bad'],
      alreadyApplied: 1,
    });
  });

  it('refuses to continue past an unfinished attempt recorded by another tool', async () => {
    writeMigration('001_a', 'CREATE TABLE a (id int);');
    await migrate(db.url, { migrationsDir: dir });
    await withClient(db.url, (c) =>
      c.query(
        `INSERT INTO "_prisma_migrations" (id, checksum, migration_name) VALUES (gen_random_uuid()::text, 'x', '002_b')`,
      ),
    );
    const err = await migrationError(migrate(db.url, { migrationsDir: dir }));
    expect(err.code).toBe('UNFINISHED_MIGRATION');
    expect(err.migrationName).toBe('002_b');
  });
});
