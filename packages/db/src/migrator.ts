import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { MigrationError } from './errors';
import { migrationsDir, readMigrations, type MigrationFile } from './migration-files';

export { migrationsDir } from './migration-files';

export type MigrateLog = (msg: string, fields?: object) => void;

export interface MigrateOptions {
  log?: MigrateLog;
  /** Defaults to this package's `prisma/migrations`; tests point it at fixtures. */
  migrationsDir?: string;
}

export interface MigrateResult {
  /** Names of the migrations this call applied, in order. */
  applied: string[];
  /** How many migrations were already recorded as applied before this call. */
  alreadyApplied: number;
}

// The key `prisma migrate` itself locks on, so our migrator and `prisma migrate deploy` exclude each other too.
const PRISMA_MIGRATE_LOCK_KEY = 72707369;

// Prisma's own DDL for its bookkeeping table, so `prisma migrate deploy` can take over a database we migrated.
const CREATE_MIGRATIONS_TABLE = `
CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
)`;

interface AppliedRow {
  migration_name: string;
  checksum: string;
  finished_at: Date | null;
}

/**
 * Applies pending migrations from `prisma/migrations`, each in its own transaction with its
 * `_prisma_migrations` row, under a session advisory lock so concurrent starters apply each migration once.
 */
export async function migrate(databaseUrl: string, opts: MigrateOptions = {}): Promise<MigrateResult> {
  const log: MigrateLog = opts.log ?? (() => undefined);
  const files = readMigrations(opts.migrationsDir ?? migrationsDir);
  const client = new Client({ connectionString: databaseUrl, application_name: 'conveyor-migrate' });
  await client.connect();
  try {
    await acquireLock(client, log);
    try {
      await client.query(CREATE_MIGRATIONS_TABLE);
      const applied = await readApplied(client);
      const pending = checkAppliedAgainstFiles(files, applied, log);
      log('migrations pending', { pending: pending.length, alreadyApplied: applied.size });
      for (const file of pending) await applyOne(client, file, log);
      return { applied: pending.map((f) => f.name), alreadyApplied: applied.size };
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [PRISMA_MIGRATE_LOCK_KEY]).catch(() => undefined);
    }
  } finally {
    await client.end();
  }
}

async function acquireLock(client: Client, log: MigrateLog): Promise<void> {
  const { rows } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [
    PRISMA_MIGRATE_LOCK_KEY,
  ]);
  if (rows[0]?.locked) return;
  // Another process is migrating; wait for it rather than fail, then find its work already done.
  log('waiting for migration lock', { lockKey: PRISMA_MIGRATE_LOCK_KEY });
  await client.query('SELECT pg_advisory_lock($1)', [PRISMA_MIGRATE_LOCK_KEY]);
}

/** Finished, not rolled-back migrations by name; refuses when an unfinished attempt is recorded. */
async function readApplied(client: Client): Promise<Map<string, AppliedRow>> {
  const { rows } = await client.query<AppliedRow>(
    `SELECT migration_name, checksum, finished_at FROM "_prisma_migrations"
     WHERE rolled_back_at IS NULL ORDER BY started_at`,
  );
  const applied = new Map<string, AppliedRow>();
  for (const row of rows) {
    if (row.finished_at === null) {
      throw new MigrationError(
        'UNFINISHED_MIGRATION',
        row.migration_name,
        `Migration ${row.migration_name} is recorded as started but not finished in _prisma_migrations. ` +
          'Repair the database, then mark it with `prisma migrate resolve --applied|--rolled-back` ' +
          '(or set rolled_back_at on that row) before migrating again.',
      );
    }
    applied.set(row.migration_name, row);
  }
  return applied;
}

function checkAppliedAgainstFiles(
  files: readonly MigrationFile[],
  applied: ReadonlyMap<string, AppliedRow>,
  log: MigrateLog,
): MigrationFile[] {
  const fileNames = new Set(files.map((f) => f.name));
  for (const name of applied.keys()) {
    // A newer release may have migrated the database already (rolling deploys): not ours to judge, but say so.
    if (!fileNames.has(name)) log('applied migration has no file here', { migration: name });
  }
  for (const file of files) {
    const row = applied.get(file.name);
    if (row && row.checksum !== file.checksum) {
      throw new MigrationError(
        'CHECKSUM_MISMATCH',
        file.name,
        `Migration ${file.name} was modified after it was applied (database checksum ${row.checksum}, ` +
          `file checksum ${file.checksum}). Applied migrations are immutable: restore the file and put the ` +
          'change in a new migration.',
      );
    }
  }
  return files.filter((f) => !applied.has(f.name));
}

async function applyOne(client: Client, file: MigrationFile, log: MigrateLog): Promise<void> {
  const started = Date.now();
  log('applying migration', { migration: file.name });
  try {
    await client.query('BEGIN');
    const id = randomUUID();
    await client.query(
      'INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at) VALUES ($1, $2, $3, now())',
      [id, file.checksum, file.name],
    );
    // No parameters: pg sends a simple query, which may hold many statements.
    await client.query(file.sql);
    await client.query(
      'UPDATE "_prisma_migrations" SET finished_at = now(), applied_steps_count = 1 WHERE id = $1',
      [id],
    );
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    const reason = err instanceof Error ? err.message : String(err);
    throw new MigrationError('MIGRATION_FAILED', file.name, `Migration ${file.name} failed: ${reason}`, {
      cause: err,
    });
  }
  log('applied migration', { migration: file.name, durationMs: Date.now() - started });
}
