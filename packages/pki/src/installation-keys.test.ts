import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseEnv } from 'node:util';
import { dropPreviousKeys, initKeysFile, rollKeysFile } from './installation-keys';

describe('rotating the keys of an installation keys file', () => {
  let dir: string;
  let file: string;
  const read = async () => parseEnv(await readFile(file, 'utf8'));

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'conveyor-keys-'));
    file = path.join(dir, 'keys.env');
    await initKeysFile(file);
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('makes a fresh secrets key current and keeps the old ones readable, newest first, until dropped', async () => {
    const first = await read();
    expect(await rollKeysFile(file, 'secrets')).toEqual({ previousKeys: 1 });
    const second = await read();
    expect(second.CONVEYOR_SECRETS_KEY).not.toBe(first.CONVEYOR_SECRETS_KEY);
    expect(Buffer.from(second.CONVEYOR_SECRETS_KEY!, 'base64')).toHaveLength(32);
    expect(second.CONVEYOR_SECRETS_PREVIOUS_KEYS).toBe(first.CONVEYOR_SECRETS_KEY);
    // The signing secret is not touched by a secrets-key rotation.
    expect(second.BLOB_SIGNING_SECRET).toBe(first.BLOB_SIGNING_SECRET);

    await rollKeysFile(file, 'secrets');
    expect((await read()).CONVEYOR_SECRETS_PREVIOUS_KEYS).toBe(
      `${second.CONVEYOR_SECRETS_KEY},${first.CONVEYOR_SECRETS_KEY}`,
    );
    expect(await dropPreviousKeys(file, 'secrets')).toEqual({ dropped: 2 });
    const last = await read();
    expect(last.CONVEYOR_SECRETS_PREVIOUS_KEYS).toBeUndefined();
    expect(last.BLOB_SIGNING_SECRET).toBe(first.BLOB_SIGNING_SECRET);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
  });

  it('rotates the signing secret on its own', async () => {
    const first = await read();
    await rollKeysFile(file, 'signing');
    const next = await read();
    expect(next.BLOB_SIGNING_SECRET!.length).toBeGreaterThanOrEqual(32);
    expect(next.BLOB_SIGNING_PREVIOUS_SECRETS).toBe(first.BLOB_SIGNING_SECRET);
    expect(next.CONVEYOR_SECRETS_KEY).toBe(first.CONVEYOR_SECRETS_KEY);
  });
});
