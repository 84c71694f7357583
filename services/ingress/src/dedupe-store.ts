import { createHash, randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';

const ACCEPTED = 'a';
/** A reservation outlives any publish attempt (bounded by PUBLISH_TIMEOUT_MS), then frees itself after a crash. */
const RESERVATION_MS = 60_000;
const WAIT_STEP_MS = 50;

/** What identifies one delivery for dedupe: its delivery ID and, for signed deliveries, the digest of what is signed. */
export interface DeliveryKeys {
  deliveryId: string;
  signedDigest?: string | undefined;
}

/** `duplicate.of`: which key was accepted before: the same delivery ID, or the same signed message (a replay). */
export type Reservation =
  | { kind: 'reserved'; token: string }
  | { kind: 'duplicate'; of: 'delivery_id' | 'signed_content' }
  | { kind: 'busy' };

// All keys or none: returns the 1-based index of the first key already accepted, -1 while any is reserved, 0 when
// all were reserved now.
const RESERVE_SCRIPT = `
for i, key in ipairs(KEYS) do if redis.call('get', key) == ARGV[2] then return i end end
for _, key in ipairs(KEYS) do if redis.call('exists', key) == 1 then return -1 end end
for _, key in ipairs(KEYS) do redis.call('set', key, ARGV[1], 'PX', ARGV[3]) end
return 0`;
const RELEASE_SCRIPT = `
for _, key in ipairs(KEYS) do if redis.call('get', key) == ARGV[1] then redis.call('del', key) end end
return 0`;

type RedisWithScripts = Redis & {
  conveyorReserveDelivery(...args: Array<string | number>): Promise<number>;
  conveyorReleaseDelivery(...args: string[]): Promise<number>;
};

/**
 * Dedupe per webhook on the delivery ID and, for signed deliveries, on the digest of the signed content (a copy of
 * a signed body under a new, unsigned delivery header is the same message). A delivery first reserves its keys
 * (SET NX with a short expiry, all or none); only after Kafka acknowledged it are they marked accepted (kept
 * DEDUPE_TTL_SECONDS); a failed publish releases the reservation, so the sender's retry after a 503 is accepted,
 * never mistaken for a duplicate. A second request with a key still publishing waits for the outcome instead of
 * guessing. Redis is the fast path: the orchestrator's delivery log is the durable word on both keys.
 */
export class DedupeStore {
  private readonly redis: RedisWithScripts;

  constructor(
    redis: Redis,
    private readonly acceptedTtlSeconds: number,
    private readonly waitMs = 10_000,
  ) {
    const commands = redis as unknown as Record<string, unknown>;
    if (typeof commands.conveyorReserveDelivery !== 'function')
      redis.defineCommand('conveyorReserveDelivery', { lua: RESERVE_SCRIPT });
    if (typeof commands.conveyorReleaseDelivery !== 'function')
      redis.defineCommand('conveyorReleaseDelivery', { lua: RELEASE_SCRIPT });
    this.redis = redis as unknown as RedisWithScripts;
  }

  static key(webhookUid: string, deliveryId: string): string {
    return `conveyor:webhook:${webhookUid}:delivery:${createHash('sha256').update(deliveryId).digest('hex').slice(0, 40)}`;
  }

  static signedKey(webhookUid: string, signedDigest: string): string {
    return `conveyor:webhook:${webhookUid}:signed:${signedDigest}`;
  }

  private static keys(webhookUid: string, keys: DeliveryKeys): string[] {
    return [
      DedupeStore.key(webhookUid, keys.deliveryId),
      ...(keys.signedDigest === undefined ? [] : [DedupeStore.signedKey(webhookUid, keys.signedDigest)]),
    ];
  }

  async reserve(webhookUid: string, keys: DeliveryKeys): Promise<Reservation> {
    const redisKeys = DedupeStore.keys(webhookUid, keys);
    const token = `p.${randomBytes(12).toString('hex')}`;
    const deadline = Date.now() + this.waitMs;
    for (;;) {
      const result = await this.redis.conveyorReserveDelivery(
        redisKeys.length,
        ...redisKeys,
        token,
        ACCEPTED,
        RESERVATION_MS,
      );
      if (result === 0) return { kind: 'reserved', token };
      if (result > 0) return { kind: 'duplicate', of: result === 1 ? 'delivery_id' : 'signed_content' };
      if (Date.now() >= deadline) return { kind: 'busy' };
      await new Promise((resolve) => setTimeout(resolve, WAIT_STEP_MS));
    }
  }

  async markAccepted(webhookUid: string, keys: DeliveryKeys): Promise<void> {
    const pipeline = this.redis.multi();
    for (const key of DedupeStore.keys(webhookUid, keys))
      pipeline.set(key, ACCEPTED, 'EX', this.acceptedTtlSeconds);
    await pipeline.exec();
  }

  async release(webhookUid: string, keys: DeliveryKeys, token: string): Promise<void> {
    const redisKeys = DedupeStore.keys(webhookUid, keys);
    await this.redis.conveyorReleaseDelivery(String(redisKeys.length), ...redisKeys, token);
  }
}
