import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Caller__Output } from '@conveyor/proto';
import type { OrchestratorApi } from '../orchestrator-api';
import { sameStamp, type AuthEpochs, type EpochStamp } from './auth-epochs';

export interface KeyCacheOptions {
  maxKeys: number;
  /** How long a cached key is served without asking the orchestrator; 0 turns the cache off. */
  ttlMs: number;
  now?: () => number;
}

/** What the gateway remembers of a key that authenticated, under the SHA-256 of the key. */
interface KnownKey {
  teamId: string;
  /** Only once the key was authenticated with its team's epochs read beforehand (see authenticate). */
  cached?: { caller: Caller__Output; stamp: EpochStamp; usableUntil: number };
}

/**
 * API key → caller, through the orchestrator's Authenticate unless a cached answer is provably current
 * (docs/service-trust.md, "The gateway's key cache"): its team's and the global auth epoch in Redis are as they were
 * when it was cached, its TTL has not run out, and the key has not expired. Failures and run-scoped keys are never
 * cached; without an answer from Redis the orchestrator is asked.
 */
export class KeyAuthenticator {
  private readonly keys: LRUCache<string, KnownKey>;
  private readonly now: () => number;

  constructor(
    private readonly api: Pick<OrchestratorApi, 'call'>,
    private readonly epochs: AuthEpochs,
    private readonly options: KeyCacheOptions,
  ) {
    this.keys = new LRUCache({ max: options.maxKeys });
    this.now = options.now ?? Date.now;
  }

  async authenticate(apiKey: string, requestId?: string): Promise<Caller__Output | undefined> {
    if (this.options.ttlMs === 0)
      return this.ask(apiKey, requestId).then((answer) => answer.caller ?? undefined);
    const id = createHash('sha256').update(apiKey).digest('base64url');
    const known = this.keys.get(id);
    // Read before the orchestrator is asked, so a change it did not see yet has bumped past this stamp.
    const stamp = known && (await this.epochs.read(known.teamId));
    const cached = known?.cached;
    if (cached && stamp && sameStamp(stamp, cached.stamp) && this.now() < cached.usableUntil)
      return cached.caller;

    let answer;
    try {
      answer = await this.ask(apiKey, requestId);
    } catch (err) {
      this.keys.delete(id);
      throw err;
    }
    const caller = answer.caller ?? undefined;
    // Run-scoped keys are revoked when their run ends, which no epoch reports.
    if (!caller || caller.run_id) {
      this.keys.delete(id);
      return caller;
    }
    const expiresAt = answer.expires_at ? Date.parse(answer.expires_at) : Infinity;
    // A key seen for the first time had no stamp read before the answer; it is cached from its next use on.
    this.keys.set(
      id,
      stamp && known?.teamId === caller.team_id
        ? {
            teamId: caller.team_id,
            cached: { caller, stamp, usableUntil: Math.min(this.now() + this.options.ttlMs, expiresAt) },
          }
        : { teamId: caller.team_id },
    );
    return caller;
  }

  /** Redis came back (perhaps empty, its epochs gone): nothing cached before can be checked any more. */
  forgetAll(): void {
    this.keys.clear();
  }

  private ask(apiKey: string, requestId: string | undefined) {
    return this.api.call('auth', 'Authenticate', { api_key: apiKey }, requestId);
  }
}
