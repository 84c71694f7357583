import type { Redis } from 'ioredis';
import type { AuthEpochKeys } from '@conveyor/runtime';

/** A team's auth epoch (null: never bumped) and the global one, as Redis holds them. */
export type EpochStamp = readonly [team: string | null, global: string];

export interface AuthEpochs {
  /**
   * Both epochs in one round trip; undefined when Redis fails or does not answer in time, or holds no global epoch
   * (no orchestrator keeps these epochs, or Redis lost them): then nothing can be checked.
   */
  read(teamId: string): Promise<EpochStamp | undefined>;
}

export const sameStamp = (a: EpochStamp, b: EpochStamp): boolean => a[0] === b[0] && a[1] === b[1];

/**
 * The epochs the orchestrator bumps (services/orchestrator/src/auth/auth-epoch-bumper.ts). The gateway's Redis
 * client has no offline queue, so an unreachable Redis fails at once; a slow one is cut off after `timeoutMs`.
 */
export function redisAuthEpochs(
  redis: Pick<Redis, 'mget'>,
  keys: AuthEpochKeys,
  timeoutMs: number,
): AuthEpochs {
  return {
    read: (teamId) =>
      new Promise((resolve) => {
        const timer = setTimeout(() => resolve(undefined), timeoutMs);
        redis.mget(keys.team(teamId), keys.global).then(
          ([team, global]) => {
            clearTimeout(timer);
            resolve(global ? [team ?? null, global] : undefined);
          },
          () => {
            clearTimeout(timer);
            resolve(undefined);
          },
        );
      }),
  };
}
