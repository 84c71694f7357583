import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseEnv } from 'node:util';

/**
 * Where `npm start` keeps the installation keys (scripts/lib/bootstrap.sh): under its CONVEYOR_DATA_DIR, by default
 * `.conveyor` in the repository root (the current directory under `npm run conveyor`).
 */
export const installationKeysFile = (env: NodeJS.ProcessEnv): string =>
  path.join(env.CONVEYOR_DATA_DIR || '.conveyor', 'keys.env');

/**
 * Fills the variables of an installation keys file (`conveyor keys init`) that `env` leaves unset, so the admin CLI
 * works on an `npm start` installation without exporting them; a variable set in the environment always wins.
 * Returns the names it filled (none when the file is absent).
 */
export function fillFromKeysFile(env: NodeJS.ProcessEnv, file: string): string[] {
  if (!existsSync(file)) return [];
  const filled: string[] = [];
  for (const [name, value] of Object.entries(parseEnv(readFileSync(file, 'utf8')))) {
    if (value === undefined || env[name]?.trim()) continue;
    env[name] = value;
    filled.push(name);
  }
  return filled;
}
