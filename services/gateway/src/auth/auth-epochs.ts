import type { Redis } from 'ioredis';
import { GLOBAL_AUTH_EPOCH_KEY, teamAuthEpochKey } from '@conveyor/runtime';

/** A team's auth epoch and the global one, as Redis holds them (null: never bumped). */
export type EpochStamp = readonly [team: string | null, global: string | null];

export interface AuthEpochs {
  /** Both epochs in one round trip; undefined when Redis fails or does not answer in time. */
  read(teamId: string): Promise<EpochStamp | undefined>;
}

export const sameStamp = (a: EpochStamp, b: EpochStamp): boolean => a[0] === b[0] && a[1] === b[1];

/**
 * The epochs the orchestrator bumps (services/orchestrator/src/auth/auth-epoch-bumper.ts). The gateway's Redis
 * client has no offline queue, so an unreachable Redis fails at once; a slow one is cut off after `timeoutMs`.
 */
export function redisAuthEpochs(redis: Pick<Redis, 'mget'>, timeoutMs: number): AuthEpochs {
  return {
    read: (teamId) =>
      new Promise((resolve) => {
        const timer = setTimeout(() => resolve(undefined), timeoutMs);
        redis.mget(teamAuthEpochKey(teamId), GLOBAL_AUTH_EPOCH_KEY).then(
          ([team, global]) => {
            clearTimeout(timer);
            resolve([team ?? null, global ?? null]);
          },
          () => {
            clearTimeout(timer);
            resolve(undefined);
          },
        );
      }),
  };
}
