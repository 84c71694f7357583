import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { webhookConfigVersionKey } from '@conveyor/kafka';

/**
 * Invalidates the ingress's cached configuration of a webhook: after every committed change the key gets a fresh
 * token that never repeats (time + randomness, not a counter, so a Redis restart that lost the key cannot bring an
 * old value back), and the ingress refetches as soon as the token it cached with differs.
 */
export class WebhookVersions {
  constructor(private readonly redis: Redis) {}

  async bump(webhookUid: string): Promise<void> {
    await this.redis.set(
      webhookConfigVersionKey(webhookUid),
      `${Date.now().toString(36)}.${randomBytes(8).toString('hex')}`,
    );
  }

  async bumpAll(webhookUids: Iterable<string>): Promise<void> {
    await Promise.all([...new Set(webhookUids)].map((uid) => this.bump(uid)));
  }
}
