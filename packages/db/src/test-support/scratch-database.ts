// This package's integration tests cannot use @conveyor/testing (it depends on us), so they make their own
// throwaway databases: empty ones, since migrating from nothing is exactly what they test.
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';

export const adminDatabaseUrl =
  process.env['DATABASE_URL'] ?? 'postgresql://conveyor:conveyor@127.0.0.1:5432/conveyor';

export interface ScratchDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

export async function createScratchDatabase(label: string): Promise<ScratchDatabase> {
  const name = `conveyor_test_${label}_${randomBytes(6).toString('hex')}`;
  await withClient(adminDatabaseUrl, (c) => c.query(`CREATE DATABASE "${name}"`));
  const url = new URL(adminDatabaseUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    drop: () =>
      withClient(adminDatabaseUrl, (c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)).then(
        () => undefined,
      ),
  };
}

export async function withClient<T>(url: string, fn: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}
