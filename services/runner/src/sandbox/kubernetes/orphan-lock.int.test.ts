import { Redis } from 'ioredis';
import { REDIS_URL } from '@conveyor/testing';
import { ORPHAN_LOCK_KEY, redisOrphanLock } from './orphan-lock';

// The reconciler's lease over a real Redis: one runner replica deletes at a time, another takes over once it lapses.
describe('the orphan reconciler lock (real Redis)', () => {
  let redis: Redis;
  beforeAll(() => {
    redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  });
  beforeEach(() => redis.del(ORPHAN_LOCK_KEY));
  afterAll(async () => {
    await redis.del(ORPHAN_LOCK_KEY);
    await redis.quit();
  });

  it('is held by one replica, renewed by it alone, and taken by another once it lapses', async () => {
    const first = redisOrphanLock(redis, 'runner-a');
    const second = redisOrphanLock(redis, 'runner-b');
    expect(await first(60_000)).toBe(true);
    expect(await second(60_000)).toBe(false);
    expect(await first(60_000)).toBe(true);
    expect(await redis.pttl(ORPHAN_LOCK_KEY)).toBeGreaterThan(0);
    // The holder stopped renewing and its lease lapsed (the key expired).
    await redis.del(ORPHAN_LOCK_KEY);
    expect(await second(60_000)).toBe(true);
    expect(await first(60_000)).toBe(false);
  });
});
