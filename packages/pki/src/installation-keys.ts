import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, chown, mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseEnv } from 'node:util';

const KEYS_FILE_HEADER =
  '# Conveyor installation keys, generated once; keep secret, back up with the database.\n';

/** The per-installation secrets the orchestrator refuses to start without (docs/service-trust.md). */
export interface InstallationKeys {
  /** HMAC-SHA256 key of signed download links. */
  BLOB_SIGNING_SECRET: string;
  /** AES-256-GCM key (32 bytes, base64) of team secrets and webhook credentials at rest. */
  CONVEYOR_SECRETS_KEY: string;
}

/** Fresh crypto-random keys (a test platform gets its own; an installation gets them once, in its keys file). */
export function generateInstallationKeys(): InstallationKeys {
  return {
    BLOB_SIGNING_SECRET: randomBytes(32).toString('base64url'),
    CONVEYOR_SECRETS_KEY: randomBytes(32).toString('base64'),
  };
}

/**
 * Writes a `KEY=value` env file of fresh keys, readable by the owner only, unless it exists: the keys of an
 * installation never change by accident (the secrets key decrypts stored data; rotation is explicit).
 */
export async function initKeysFile(file: string): Promise<{ written: boolean }> {
  if (existsSync(file)) return { written: false };
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const lines = Object.entries(generateInstallationKeys()).map(([k, v]) => `${k}=${v}`);
  await writeFile(file, `${KEYS_FILE_HEADER}${lines.join('\n')}\n`, { mode: 0o600, flag: 'wx' });
  await chmod(file, 0o600);
  return { written: true };
}

/** The two rotatable keys of a keys file: the variable in use and the one listing those being retired. */
const ROTATABLE = {
  secrets: {
    current: 'CONVEYOR_SECRETS_KEY',
    previous: 'CONVEYOR_SECRETS_PREVIOUS_KEYS',
    fresh: () => randomBytes(32).toString('base64'),
  },
  signing: {
    current: 'BLOB_SIGNING_SECRET',
    previous: 'BLOB_SIGNING_PREVIOUS_SECRETS',
    fresh: () => randomBytes(32).toString('base64url'),
  },
} as const;
export type RotatableKey = keyof typeof ROTATABLE;

async function rewriteKeysFile(
  file: string,
  change: (vars: Record<string, string | undefined>) => void,
): Promise<void> {
  const vars: Record<string, string | undefined> = { ...parseEnv(await readFile(file, 'utf8')) };
  change(vars);
  const lines = Object.entries(vars).flatMap(([k, v]) => (v ? [`${k}=${v}`] : []));
  // Written beside and renamed over the file: a crash leaves the old file or the new one, never half of one. Same
  // owner as before (Compose's pki job runs as root on a file the services read as uid 1000).
  const { uid, gid } = await stat(file);
  const next = `${file}.next`;
  await writeFile(next, `${KEYS_FILE_HEADER}${lines.join('\n')}\n`, { mode: 0o600 });
  await chown(next, uid, gid);
  await rename(next, file);
}

/**
 * First step of a rotation (docs/operations.md): a fresh key becomes the current one and the one it replaces is
 * listed first among the previous ones, which stay accepted for reading. Returns the previous keys' count.
 */
export async function rollKeysFile(file: string, key: RotatableKey): Promise<{ previousKeys: number }> {
  const { current, previous, fresh } = ROTATABLE[key];
  let previousKeys = 0;
  await rewriteKeysFile(file, (vars) => {
    const old = vars[current]?.trim();
    if (!old) throw new Error(`${file} has no ${current} to rotate`);
    const retired = [old, ...(vars[previous] ?? '').split(',').map((k) => k.trim())].filter(Boolean);
    vars[current] = fresh();
    vars[previous] = retired.join(',');
    previousKeys = retired.length;
  });
  return { previousKeys };
}

/** Last step of a rotation: the previous keys are no longer accepted. */
export async function dropPreviousKeys(file: string, key: RotatableKey): Promise<{ dropped: number }> {
  let dropped = 0;
  await rewriteKeysFile(file, (vars) => {
    const { previous } = ROTATABLE[key];
    dropped = (vars[previous] ?? '').split(',').filter((k) => k.trim()).length;
    delete vars[previous];
  });
  return { dropped };
}
