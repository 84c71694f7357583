import { createHash, randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';

const ACCEPTED = 'a';
/** A reservation outlives any publish attempt (bounded by PUBLISH_TIMEOUT_MS), then frees itself after a crash. */
const RESERVATION_MS = 60_000;
const WAIT_STEP_MS = 50;

export type Reservation = { kind: 'reserved'; token: string } | { kind: 'duplicate' } | { kind: 'busy' };

const RELEASE_SCRIPT = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;

type RedisWithRelease = Redis & { conveyorReleaseReservation(key: string, token: string): Promise<number> };

/**
 * Delivery-ID dedupe per webhook. A delivery first reserves its ID (SET NX with a short expiry); only after Kafka
 * acknowledged it is the ID marked accepted (kept DEDUPE_TTL_SECONDS); a failed publish releases the reservation,
 * so the sender's retry after a 503 is accepted, never mistaken for a duplicate. A second request with the same ID
 * while the first is still publishing waits for the outcome instead of guessing.
 */
export class DedupeStore {
  private readonly redis: RedisWithRelease;

  constructor(
    redis: Redis,
    private readonly acceptedTtlSeconds: number,
    private readonly waitMs = 10_000,
  ) {
    if (typeof (redis as unknown as Record<string, unknown>).conveyorReleaseReservation !== 'function') {
      redis.defineCommand('conveyorReleaseReservation', { numberOfKeys: 1, lua: RELEASE_SCRIPT });
    }
    this.redis = redis as unknown as RedisWithRelease;
  }

  static key(webhookUid: string, deliveryId: string): string {
    return `conveyor:webhook:${webhookUid}:delivery:${createHash('sha256').update(deliveryId).digest('hex').slice(0, 40)}`;
  }

  async reserve(webhookUid: string, deliveryId: string): Promise<Reservation> {
    const key = DedupeStore.key(webhookUid, deliveryId);
    const token = `p.${randomBytes(12).toString('hex')}`;
    const deadline = Date.now() + this.waitMs;
    for (;;) {
      const set = await this.redis.set(key, token, 'PX', RESERVATION_MS, 'NX');
      if (set === 'OK') return { kind: 'reserved', token };
      const current = await this.redis.get(key);
      if (current === ACCEPTED) return { kind: 'duplicate' };
      if (current !== null && Date.now() >= deadline) return { kind: 'busy' };
      if (current !== null) await new Promise((resolve) => setTimeout(resolve, WAIT_STEP_MS));
    }
  }

  async markAccepted(webhookUid: string, deliveryId: string): Promise<void> {
    await this.redis.set(DedupeStore.key(webhookUid, deliveryId), ACCEPTED, 'EX', this.acceptedTtlSeconds);
  }

  async release(webhookUid: string, deliveryId: string, token: string): Promise<void> {
    await this.redis.conveyorReleaseReservation(DedupeStore.key(webhookUid, deliveryId), token);
  }
}
