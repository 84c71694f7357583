import { randomBytes } from 'node:crypto';
import { migrate, migrationsChecksum, readMigrations } from '@conveyor/db';
import { Client } from 'pg';
import { DATABASE_URL } from './infra-env';

export interface TestDatabase {
  /** Connection URL of the new database (same server and credentials as the admin URL). */
  url: string;
  name: string;
  /** Terminates its connections and drops it; safe to call more than once. */
  drop(): Promise<void>;
}

export interface CreateTestDatabaseOptions {
  /** Admin connection that may CREATE DATABASE; defaults to DATABASE_URL. */
  adminUrl?: string;
}

// Serialises template builds across processes: jest workers of several packages start at once.
// Distinct from Prisma's migrate lock (72707369), which `migrate()` takes inside the template.
const TEMPLATE_LOCK_KEY = 72707370;

// Per process: the template is checked (and built if needed) once, then every database is a cheap copy.
const templates = new Map<string, Promise<string>>();

/** Named after the migrations' combined checksum, so an edited or added migration gets a fresh template. */
export function templateDatabaseName(checksum: string): string {
  return `conveyor_tpl_${checksum.slice(0, 16)}`;
}

/** A fresh, fully migrated database `conveyor_test_<random>`, copied from a migrated template. */
export async function createTestDatabase(opts: CreateTestDatabaseOptions = {}): Promise<TestDatabase> {
  const adminUrl = opts.adminUrl ?? DATABASE_URL;
  const template = await ensureTemplate(adminUrl);
  const name = `conveyor_test_${randomBytes(8).toString('hex')}`;
  await withClient(adminUrl, (c) => c.query(`CREATE DATABASE "${name}" TEMPLATE "${template}"`));
  let dropped: Promise<void> | undefined;
  return {
    url: databaseUrl(adminUrl, name),
    name,
    drop: () =>
      // WITH (FORCE) terminates the sessions still connected (a pool a test forgot to close) before dropping.
      (dropped ??= withClient(adminUrl, (c) =>
        c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`),
      ).then(() => undefined)),
  };
}

function ensureTemplate(adminUrl: string): Promise<string> {
  const name = templateDatabaseName(migrationsChecksum(readMigrations()));
  const key = `${adminUrl}\n${name}`;
  let pending = templates.get(key);
  if (!pending) {
    pending = buildTemplateOnce(adminUrl, name);
    // A failure (server down) must not stick: the next test retries instead of reusing the rejection.
    pending.catch(() => templates.delete(key));
    templates.set(key, pending);
  }
  return pending;
}

async function buildTemplateOnce(adminUrl: string, name: string): Promise<string> {
  await withClient(adminUrl, async (admin) => {
    await admin.query('SELECT pg_advisory_lock($1)', [TEMPLATE_LOCK_KEY]);
    try {
      const existing = await admin.query<{ datistemplate: boolean }>(
        'SELECT datistemplate FROM pg_database WHERE datname = $1',
        [name],
      );
      // IS_TEMPLATE is set only after a complete migration, so a template-flagged database is ready.
      if (existing.rows[0]?.datistemplate) return;
      // Present but not flagged: a build that died half-way. We hold the lock, so nobody else is using it.
      if (existing.rows[0]) await admin.query(`DROP DATABASE "${name}" WITH (FORCE)`);
      await admin.query(`CREATE DATABASE "${name}"`);
      await migrate(databaseUrl(adminUrl, name));
      // No connections allowed: CREATE DATABASE ... TEMPLATE fails while anyone is connected to the template.
      await admin.query(`ALTER DATABASE "${name}" WITH IS_TEMPLATE true ALLOW_CONNECTIONS false`);
    } finally {
      await admin.query('SELECT pg_advisory_unlock($1)', [TEMPLATE_LOCK_KEY]).catch(() => undefined);
    }
  });
  return name;
}

function databaseUrl(adminUrl: string, database: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

async function withClient<T>(url: string, fn: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url });
  try {
    await client.connect();
  } catch (err) {
    const where = new URL(url);
    where.password = '';
    throw new Error(
      `PostgreSQL is not reachable at ${where.host} (${String(err)}); start it with \`scripts/infra.sh up\``,
      { cause: err },
    );
  }
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}
