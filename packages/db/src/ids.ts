import { randomInt, randomUUID } from 'node:crypto';

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** `length` characters from [A-Za-z0-9]; `randomInt` is uniform (no modulo bias) and cryptographically random. */
export function randomAlphanumeric(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += ALPHANUMERIC[randomInt(ALPHANUMERIC.length)];
  return out;
}

/** Prefixed opaque ID, e.g. `newId('team')` → `team_3xK…` (24 random characters, ~143 bits). */
export function newId(prefix: string): string {
  return `${prefix}_${randomAlphanumeric(24)}`;
}

/** Environment IDs: 22 characters from [A-Za-z0-9] (~131 bits), the format clients already expect. */
export function newEnvironmentId(): string {
  return randomAlphanumeric(22);
}

/** For the `@db.Uuid` columns (runs, conversations, sessions, artifacts). */
export function newUuid(): string {
  return randomUUID();
}
