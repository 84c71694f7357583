import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { randomAlphanumeric } from '@conveyor/db';

const KEY_PATTERN = /^(cvy_[A-Za-z0-9]{10})_([A-Za-z0-9_-]{43})$/;

export interface GeneratedApiKey {
  /** Shown once to the caller, never stored. */
  key: string;
  /** Public, stored, shown in listings so people can tell keys apart. */
  prefix: string;
  secretHash: string;
}

/**
 * 256 bits of randomness make a slow password hash pointless: SHA-256 of the whole key is enough to make a stolen
 * table useless, and a lookup by the public prefix keeps verification one indexed read.
 */
export function generateApiKey(): GeneratedApiKey {
  const prefix = `cvy_${randomAlphanumeric(10)}`;
  const key = `${prefix}_${randomBytes(32).toString('base64url')}`;
  return { key, prefix, secretHash: hashApiKey(key) };
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

export function parseApiKey(key: string): { prefix: string } | undefined {
  const match = KEY_PATTERN.exec(key);
  return match ? { prefix: match[1]! } : undefined;
}

export function apiKeyMatches(key: string, storedHash: string): boolean {
  const given = Buffer.from(hashApiKey(key), 'hex');
  const stored = Buffer.from(storedHash, 'hex');
  return given.length === stored.length && timingSafeEqual(given, stored);
}
