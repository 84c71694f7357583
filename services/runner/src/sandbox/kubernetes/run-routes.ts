import type { Redis } from 'ioredis';

/**
 * Which runner replica serves a run now, by the digest of the run's key: the run gateway of any replica looks it up to
 * pass a request on to the replica holding the run's grants (run-gateway.ts). Entries expire unless renewed, so a
 * replica that is gone stops being named within `ttlMs`.
 */
export interface RunRoutes {
  /** The `host:port` of the gateway holding the run, or undefined when none does. */
  holder(digest: string): Promise<string | undefined>;
  /** Names this gateway as the holder of these runs (a run it serves now, or adopted: whoever held it before). */
  hold(digests: readonly string[]): Promise<void>;
  /** Renews this gateway's entries for these runs, and only those: a run another replica took over stays theirs. */
  renew(digests: readonly string[]): Promise<void>;
  /** Forgets the run, if this gateway still holds it. */
  drop(digest: string): Promise<void>;
}

/** Deletes the key only while it still names this holder: a replica that took the run over keeps its entry. */
const DROP_IF_HELD = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

/** Renews each key (ARGV[2] ms) that names this holder (ARGV[1]) or none (expired meanwhile), never another's. */
const RENEW_IF_HELD = `for _, key in ipairs(KEYS) do
  local holder = redis.call('GET', key)
  if holder == false or holder == ARGV[1] then redis.call('SET', key, ARGV[1], 'PX', ARGV[2]) end
end
return 0`;

export function redisRunRoutes(redis: Redis, self: string, ttlMs: number): RunRoutes {
  // Digests of random keys: no two installations or test platforms sharing a Redis meet here.
  const keyOf = (digest: string) => `conveyor:run-gateway:${digest}`;
  return {
    holder: async (digest) => (await redis.get(keyOf(digest))) ?? undefined,
    hold: async (digests) => {
      if (digests.length === 0) return;
      const batch = redis.multi();
      for (const digest of digests) batch.set(keyOf(digest), self, 'PX', ttlMs);
      await batch.exec();
    },
    renew: async (digests) => {
      if (digests.length === 0) return;
      await redis.eval(RENEW_IF_HELD, digests.length, ...digests.map(keyOf), self, ttlMs);
    },
    drop: async (digest) => {
      await redis.eval(DROP_IF_HELD, 1, keyOf(digest), self);
    },
  };
}

/** The routes of a process with no other replica (the self-hosted worker): every run it serves is its own. */
export const LONE_PROCESS_ROUTES: RunRoutes = {
  holder: async () => undefined,
  hold: async () => undefined,
  renew: async () => undefined,
  drop: async () => undefined,
};
