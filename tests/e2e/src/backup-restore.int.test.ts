import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseEnv, promisify } from 'node:util';
import type { InstallationKeys } from '@conveyor/pki';
import { DATABASE_URL, trustOf, uniqueName } from '@conveyor/testing';
import { startPlatform, type RunningPlatform } from './platform';
import { apiCall, waitForRunState } from './run-waits';
import { webhookApi } from './webhook-helpers';

const run = promisify(execFile);

/** The same server and credentials as `url`, another database. */
function databaseUrlOf(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

const transcriptOf = async (platform: RunningPlatform, runId: string, apiKey: string): Promise<string> => {
  const res = await fetch(`${platform.apiUrl}/agent/runs/${runId}/transcript`, {
    headers: { Authorization: `Bearer ${apiKey}` },
  });
  if (res.status !== 200) throw new Error(`transcript: ${res.status} ${await res.text()}`);
  return res.text();
};

/**
 * docs/operations.md "Backup and restore", followed as written: a dump of the database, the keys file and the PKI
 * directory (the blobs are in the database with the default BLOB_STORE=postgres) are all that survives the first
 * installation; a second one on a new database, restored from them, serves the same runs, transcripts and secrets.
 */
describe('backup and restore into a new installation', () => {
  let original: RunningPlatform | undefined;
  let restored: RunningPlatform | undefined;
  let backupDir: string;
  const restoredDb = uniqueName('conveyor_restored').replace(/-/g, '_');

  beforeAll(async () => {
    backupDir = await mkdtemp(path.join(os.tmpdir(), 'conveyor-backup-'));
  });

  afterAll(async () => {
    await original?.stop();
    await restored?.stop();
    await run('dropdb', ['--if-exists', '--force', `--maintenance-db=${DATABASE_URL}`, restoredDb]);
    await rm(backupDir, { recursive: true, force: true });
  });

  it('serves the runs, their transcripts and the decrypted secrets of the backup', async () => {
    original = await startPlatform();
    const created = await apiCall(original, 'POST', '/agent/runs', {
      prompt: 'Back me up\n@demo message kept across a restore',
    });
    expect(created.status).toBe(200);
    const runId = created.body.run_id as string;
    await waitForRunState(original, runId, ['SUCCEEDED']);
    const transcript = await transcriptOf(original, runId, original.apiKey);
    expect(transcript).toContain('kept across a restore');
    const hooks = webhookApi(original);
    const hook = await hooks.webhook(await hooks.factory(), { name: 'restored-hook' });
    const apiKey = original.apiKey;

    // The backup: pg_dump, the keys file, the PKI directory. Then the first installation is gone entirely.
    const dump = path.join(backupDir, 'conveyor.dump');
    await run('pg_dump', ['--format=custom', `--file=${dump}`, original.databaseUrl]);
    await writeFile(
      path.join(backupDir, 'keys.env'),
      Object.entries(original.trust.keys)
        .map(([k, v]) => `${k}=${v}`)
        .join('\n'),
      { mode: 0o600 },
    );
    await cp(original.trust.pkiDir, path.join(backupDir, 'pki'), { recursive: true });
    await original.stop();
    original = undefined;

    // The restore: a new, empty database, the dump into it, the keys and PKI put back.
    await run('createdb', [`--maintenance-db=${DATABASE_URL}`, restoredDb]);
    await run('pg_restore', ['--no-owner', `--dbname=${databaseUrlOf(DATABASE_URL, restoredDb)}`, dump]);
    const keys = parseEnv(
      await readFile(path.join(backupDir, 'keys.env'), 'utf8'),
    ) as unknown as InstallationKeys;
    restored = await startPlatform({
      installation: {
        databaseUrl: databaseUrlOf(DATABASE_URL, restoredDb),
        trust: trustOf(path.join(backupDir, 'pki'), keys),
      },
    });

    // The old API key (only its hash was backed up) still works, the run reads the same, its transcript downloads.
    const got = await apiCall(restored, 'GET', `/agent/runs/${runId}`, undefined, apiKey);
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ run_id: runId, state: 'SUCCEEDED' });
    expect(await transcriptOf(restored, runId, apiKey)).toBe(transcript);
    // The webhook's credential decrypts with the restored key: its secret is accepted, another refused.
    const ingress = `${restored.ingressUrl}/webhooks/w/${hook.webhook_uid}`;
    const post = (secret: string) =>
      fetch(ingress, {
        method: 'POST',
        body: '{"restored":true}',
        headers: { authorization: `Bearer ${secret}` },
      });
    expect((await post(hook.secret!)).status).toBe(202);
    expect((await post(`${hook.secret!}x`)).status).toBe(401);
  }, 180_000);
});
