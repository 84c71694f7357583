import { Redis } from 'ioredis';
import { REDIS_URL } from '@conveyor/testing';
import { ConsoleSessions, csrfTokenMatches } from './console-sessions';

describe('console sessions (real Redis)', () => {
  const redis = new Redis(REDIS_URL);
  const sessions = new ConsoleSessions(redis, 60);
  const apiKey = 'cvy_test_key_that_must_never_be_stored_in_clear';
  afterAll(() => redis.quit());

  it('round-trips a session, keeps only an encrypted key in Redis, and expires it', async () => {
    const { cookieValue, session } = await sessions.create(apiKey);
    expect(await sessions.read(cookieValue)).toEqual(session);
    const [id] = cookieValue.split('.');
    const stored = await redis.get(`console-session:${id}`);
    expect(stored).not.toBeNull();
    expect(stored).not.toContain(apiKey);
    expect(cookieValue).not.toContain(apiKey);
    const ttl = await redis.ttl(`console-session:${id}`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60);
  });

  it('refuses a session ID presented with another sealing key, malformed cookies, and signed-out sessions', async () => {
    const { cookieValue } = await sessions.create(apiKey);
    const [id, key] = cookieValue.split('.') as [string, string];
    const other = (await sessions.create(apiKey)).cookieValue.split('.')[1]!;
    expect(await sessions.read(`${id}.${other}`)).toBeUndefined();
    expect(await sessions.read(id)).toBeUndefined();
    expect(await sessions.read(`${id}.${key}x`)).toBeUndefined();
    await sessions.destroy(cookieValue);
    expect(await sessions.read(cookieValue)).toBeUndefined();
  });

  it('compares CSRF tokens exactly', () => {
    expect(csrfTokenMatches('abc', 'abc')).toBe(true);
    expect(csrfTokenMatches('abd', 'abc')).toBe(false);
    expect(csrfTokenMatches('ab', 'abc')).toBe(false);
    expect(csrfTokenMatches(undefined, 'abc')).toBe(false);
  });
});
