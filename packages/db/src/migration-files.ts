import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** `packages/db/prisma/migrations`; the same path from `src/` (jest) and `dist/` (built). */
export const migrationsDir = path.resolve(__dirname, '..', 'prisma', 'migrations');

export interface MigrationFile {
  /** Folder name, e.g. `20261122000000_init`; also `_prisma_migrations.migration_name`. */
  readonly name: string;
  readonly sql: string;
  /** sha256 hex of the file, as Prisma stores it in `_prisma_migrations.checksum`. */
  readonly checksum: string;
}

export function sha256Hex(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

/** Migration folders in name order (Prisma's order: the timestamp prefix sorts them). */
export function readMigrations(dir: string = migrationsDir): MigrationFile[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(path.join(dir, entry.name, 'migration.sql')))
    .map((entry) => entry.name)
    .sort()
    .map((name) => {
      // Hash the raw bytes, not a decoded string, so the checksum equals Prisma's for any file content.
      const bytes = readFileSync(path.join(dir, name, 'migration.sql'));
      return { name, sql: bytes.toString('utf8'), checksum: sha256Hex(bytes) };
    });
}

/** One hash over every migration's name and checksum: changes whenever any migration is added or edited. */
export function migrationsChecksum(migrations: readonly MigrationFile[]): string {
  return sha256Hex(migrations.map((m) => `${m.name}:${m.checksum}`).join('\n'));
}
