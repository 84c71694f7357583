import { createCipheriv, createDecipheriv, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Redis } from 'ioredis';

/** What a signed-in browser holds: the API key it signed in with, and its CSRF token. */
export interface ConsoleSession {
  apiKey: string;
  csrfToken: string;
}

interface StoredSession {
  /** AES-256-GCM of the API key under the key that only the cookie carries: iv.ciphertext.tag, base64url. */
  sealedKey: string;
  csrfToken: string;
}

const PREFIX = 'console-session:';
const COOKIE_VALUE = /^([A-Za-z0-9_-]{43})\.([A-Za-z0-9_-]{43})$/;

const b64 = (buf: Buffer) => buf.toString('base64url');

function seal(apiKey: string, key: Buffer): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const ciphertext = Buffer.concat([cipher.update(apiKey, 'utf8'), cipher.final()]);
  return [iv, ciphertext, cipher.getAuthTag()].map(b64).join('.');
}

function unseal(sealed: string, key: Buffer): string | undefined {
  const [iv, ciphertext, tag] = sealed.split('.').map((part) => Buffer.from(part, 'base64url'));
  if (!iv || !ciphertext || !tag) return undefined;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, iv);
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString('utf8');
  } catch {
    return undefined;
  }
}

/**
 * Console sign-in sessions in Redis with an expiry. The cookie is `<session id>.<sealing key>`: Redis holds the
 * API key only encrypted under a key that lives in the browser's HttpOnly cookie, so neither a Redis dump nor a
 * stolen session ID alone yields an API key. Every request re-authenticates the key, so revoking it (or changing
 * the user's role) takes effect at once. Sign-out deletes the record.
 */
export class ConsoleSessions {
  constructor(
    private readonly redis: Redis,
    private readonly ttlSeconds: number,
  ) {}

  async create(apiKey: string): Promise<{ cookieValue: string; session: ConsoleSession }> {
    const id = randomBytes(32);
    const key = randomBytes(32);
    const session = { apiKey, csrfToken: b64(randomBytes(32)) };
    const stored: StoredSession = { sealedKey: seal(apiKey, key), csrfToken: session.csrfToken };
    await this.redis.set(PREFIX + b64(id), JSON.stringify(stored), 'EX', this.ttlSeconds);
    return { cookieValue: `${b64(id)}.${b64(key)}`, session };
  }

  async read(cookieValue: string): Promise<ConsoleSession | undefined> {
    const match = COOKIE_VALUE.exec(cookieValue);
    if (!match) return undefined;
    const raw = await this.redis.get(PREFIX + match[1]!);
    if (!raw) return undefined;
    const stored = JSON.parse(raw) as StoredSession;
    const apiKey = unseal(stored.sealedKey, Buffer.from(match[2]!, 'base64url'));
    return apiKey === undefined ? undefined : { apiKey, csrfToken: stored.csrfToken };
  }

  async destroy(cookieValue: string): Promise<void> {
    const match = COOKIE_VALUE.exec(cookieValue);
    if (match) await this.redis.del(PREFIX + match[1]!);
  }
}

/** Constant-time comparison of a presented CSRF token with the session's. */
export function csrfTokenMatches(presented: string | undefined, expected: string): boolean {
  if (!presented) return false;
  const a = Buffer.from(presented);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
