import type { Redis } from 'ioredis';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';

export type RateDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

const retryAfter = (res: RateLimiterRes): number => Math.max(1, Math.ceil(res.msBeforeNext / 1000));

/**
 * The two per-sender budgets of a webhook, in Redis (rate-limiter-flexible, fixed one-minute windows):
 * deliveries (60 a minute) and, separately, failed authentications (a smaller budget that alone produces 429).
 * A sender is the client IP address as express reports it (X-Forwarded-For honoured only from TRUST_PROXY).
 * Redis failures are thrown, not swallowed: the ingress answers 503 rather than run without limits.
 */
export class RateLimits {
  private readonly deliveries: RateLimiterRedis;
  private readonly failedAuth: RateLimiterRedis;

  constructor(redis: Redis, options: { deliveriesPerMinute: number; failedAuthPerMinute: number }) {
    this.deliveries = new RateLimiterRedis({
      storeClient: redis,
      keyPrefix: 'conveyor:rl:delivery',
      points: options.deliveriesPerMinute,
      duration: 60,
    });
    this.failedAuth = new RateLimiterRedis({
      storeClient: redis,
      keyPrefix: 'conveyor:rl:failed-auth',
      points: options.failedAuthPerMinute,
      duration: 60,
    });
  }

  private static key(webhookUid: string, sender: string): string {
    return `${webhookUid}:${sender}`;
  }

  /** Whether the sender has used up its failed-authentication budget (checked before authenticating). */
  async checkFailedAuth(webhookUid: string, sender: string): Promise<RateDecision> {
    const res = await this.failedAuth.get(RateLimits.key(webhookUid, sender));
    if (res && res.remainingPoints <= 0 && res.msBeforeNext > 0)
      return { allowed: false, retryAfterSeconds: retryAfter(res) };
    return { allowed: true };
  }

  async recordFailedAuth(webhookUid: string, sender: string): Promise<void> {
    try {
      await this.failedAuth.consume(RateLimits.key(webhookUid, sender));
    } catch (err) {
      if (!(err instanceof RateLimiterRes)) throw err;
    }
  }

  /** Takes one delivery from the sender's budget. */
  async consumeDelivery(webhookUid: string, sender: string): Promise<RateDecision> {
    try {
      await this.deliveries.consume(RateLimits.key(webhookUid, sender));
      return { allowed: true };
    } catch (err) {
      if (err instanceof RateLimiterRes) return { allowed: false, retryAfterSeconds: retryAfter(err) };
      throw err;
    }
  }
}
