import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';

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
  await writeFile(
    file,
    `# Conveyor installation keys, generated once; keep secret, back up with the database.\n${lines.join('\n')}\n`,
    { mode: 0o600, flag: 'wx' },
  );
  await chmod(file, 0o600);
  return { written: true };
}
