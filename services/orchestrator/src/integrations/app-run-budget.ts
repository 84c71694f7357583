import type { Redis } from 'ioredis';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';

/**
 * The runs a team's apps of one integration may start per hour (GITHUB_APP_RUNS_PER_HOUR, SLACK_APP_RUNS_PER_HOUR), in Redis (rate-limiter-flexible, a
 * fixed one-hour window per team): taken atomically as each run is prepared, so the deliveries of one batch, or of
 * several orchestrators, cannot pass it together. A delivery re-consumed after a crash takes again: the budget errs
 * towards fewer runs. Redis failures are thrown: the delivery is retried rather than run without the limit.
 */
export class AppRunBudget {
  private readonly limiter: RateLimiterRedis;

  constructor(redis: Redis, options: { runsPerHour: number; keyPrefix: string; integration: string }) {
    this.limiter = new RateLimiterRedis({
      storeClient: redis,
      keyPrefix: `${options.keyPrefix}:${options.integration}-runs`,
      points: options.runsPerHour,
      duration: 3600,
    });
  }

  get runsPerHour(): number {
    return this.limiter.points;
  }

  /** Takes one run from the team's budget; false when it is spent. */
  async take(teamId: string): Promise<boolean> {
    try {
      await this.limiter.consume(teamId);
      return true;
    } catch (err) {
      if (err instanceof RateLimiterRes) return false;
      throw err;
    }
  }
}
