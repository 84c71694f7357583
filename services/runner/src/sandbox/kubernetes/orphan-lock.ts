import type { Redis } from 'ioredis';

/** Renews the lock when `holder` has it, else takes it when free; 1 when `holder` holds it for the next `ttl` ms. */
const TAKE_OR_RENEW = `if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
return 0`;

/** The key the runner replicas share, so that one reconciler deletes at a time. */
export const ORPHAN_LOCK_KEY = 'conveyor:runner:orphan-reconciler';

/** A lease in Redis: the replica that took it keeps it while it renews; another takes over once it lapses. */
export function redisOrphanLock(redis: Redis, holder: string): (ttlMs: number) => Promise<boolean> {
  return async (ttlMs) => (await redis.eval(TAKE_OR_RENEW, 1, ORPHAN_LOCK_KEY, holder, ttlMs)) === 1;
}
