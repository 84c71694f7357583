import type { NextFunction, Request, Response } from 'express';
import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { AppError } from '@conveyor/errors';

export interface RateBudget {
  points: number;
  seconds: number;
}

/**
 * A budget in Redis shared by every gateway replica (rate-limiter-flexible, fixed windows). Should Redis fail, the
 * library falls back to the same budget in this process's memory rather than refusing the whole API or running
 * without limits.
 */
const limiter = (redis: Redis, keyPrefix: string, budget: RateBudget) =>
  new RateLimiterRedis({
    storeClient: redis,
    keyPrefix,
    points: budget.points,
    duration: budget.seconds,
    insuranceLimiter: new RateLimiterMemory({ keyPrefix, points: budget.points, duration: budget.seconds }),
  });

/** A spent budget (rate-limiter-flexible rejects with a RateLimiterRes) as the contract's 429; other errors as they are. */
const refusal = (err: unknown, which: string): unknown =>
  err instanceof RateLimiterRes
    ? new AppError('rate_limited', `Too many requests for this ${which}`, {
        details: { retry_after_seconds: Math.max(1, Math.ceil(err.msBeforeNext / 1000)) },
      })
    : err;

/**
 * Per-key and per-team request budgets for authenticated callers (mounted after `identify`, before bodies are
 * parsed). A request the key's budget refuses does not take from the team's. Over either: 429 `rate_limited` with
 * Retry-After.
 */
export function rateLimit(
  redis: Redis,
  budgets: { prefix: string; perKey: RateBudget; perTeam: RateBudget },
) {
  const perKey = limiter(redis, `${budgets.prefix}:api-key`, budgets.perKey);
  const perTeam = limiter(redis, `${budgets.prefix}:team`, budgets.perTeam);
  return async (req: Request, _res: Response, next: NextFunction): Promise<void> => {
    const caller = req.caller;
    if (!caller) return next();
    // Run-scoped keys (harness credentials) have no key row of their own: their budget is the run's.
    const key =
      caller.api_key_id || (caller.run_id ? `run:${caller.run_id}` : `principal:${caller.principal_id}`);
    try {
      await perKey.consume(key);
    } catch (err) {
      return next(refusal(err, 'API key'));
    }
    try {
      await perTeam.consume(caller.team_id);
    } catch (err) {
      return next(refusal(err, 'team'));
    }
    next();
  };
}
