#!/usr/bin/env node
// `node packages/db/dist/migrate-cli.js`: applies pending migrations to $DATABASE_URL, one JSON log line per event.
import { MigrationError } from './errors';
import { migrate } from './migrator';

function logLine(level: 'info' | 'error', msg: string, fields: object = {}): void {
  const line = JSON.stringify({
    level,
    time: new Date().toISOString(),
    service: 'db-migrate',
    msg,
    ...fields,
  });
  (level === 'error' ? process.stderr : process.stdout).write(`${line}\n`);
}

async function main(): Promise<number> {
  const databaseUrl = process.env['DATABASE_URL'];
  if (!databaseUrl) {
    logLine('error', 'DATABASE_URL is not set');
    return 2;
  }
  try {
    const result = await migrate(databaseUrl, { log: (msg, fields) => logLine('info', msg, fields) });
    logLine('info', 'migrations complete', result);
    return 0;
  } catch (err) {
    const fields =
      err instanceof MigrationError
        ? { code: err.code, migration: err.migrationName, error: err.message }
        : { error: err instanceof Error ? err.message : String(err) };
    logLine('error', 'migration failed', fields);
    return 1;
  }
}

void main().then((code) => {
  process.exitCode = code;
});
