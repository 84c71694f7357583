import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { webhookConfigVersionKey } from '@conveyor/kafka';
import type { IngressWebhook } from '@conveyor/webhook-auth';

/** What the ingress knows about a webhook: the orchestrator's answer for its UID. */
export interface WebhookConfig extends IngressWebhook {
  uid: string;
}

export type WebhookLookup = (uid: string) => Promise<WebhookConfig>;

/** A version key the ingress had to create lives this long, so random UIDs cannot pile keys up in Redis. */
const CREATED_VERSION_TTL_SECONDS = 600;

interface Entry {
  version: string;
  config: WebhookConfig;
}

/**
 * Webhook configuration with a cache that is never stale: every request reads the webhook's version token from
 * Redis (the orchestrator writes a fresh one after each committed change) and the cached entry is used only when
 * it was fetched under that same token. A missing token is created (SET NX) *before* fetching, so a change that
 * commits during the fetch always leaves a token different from the one the fetched entry is tagged with.
 */
export class WebhookResolver {
  private readonly cache = new Map<string, Entry>();
  private readonly inflight = new Map<string, Promise<WebhookConfig>>();

  constructor(
    private readonly redis: Redis,
    private readonly lookup: WebhookLookup,
    private readonly maxEntries = 10_000,
  ) {}

  /** The version token as it is now; undefined when the key does not exist. */
  async readVersion(uid: string): Promise<string | undefined> {
    return (await this.redis.get(webhookConfigVersionKey(uid))) ?? undefined;
  }

  /** `version` must have been read for this request (readVersion), before anything else about the webhook. */
  async resolve(uid: string, version: string | undefined): Promise<WebhookConfig> {
    let current = version;
    if (current === undefined) current = await this.createVersion(uid);
    const cached = this.cache.get(uid);
    if (cached && cached.version === current) {
      // Refresh recency for the LRU bound.
      this.cache.delete(uid);
      this.cache.set(uid, cached);
      return cached.config;
    }
    const key = `${uid}\n${current}`;
    let pending = this.inflight.get(key);
    if (!pending) {
      const tag = current;
      pending = this.lookup(uid)
        .then((config) => {
          this.store(uid, { version: tag, config });
          return config;
        })
        .finally(() => this.inflight.delete(key));
      this.inflight.set(key, pending);
    }
    return pending;
  }

  private async createVersion(uid: string): Promise<string> {
    const fresh = `i.${Date.now().toString(36)}.${randomBytes(8).toString('hex')}`;
    // NX + GET: either our token was set (nil comes back) or someone else's is returned.
    const previous = (await this.redis.call(
      'SET',
      webhookConfigVersionKey(uid),
      fresh,
      'EX',
      String(CREATED_VERSION_TTL_SECONDS),
      'NX',
      'GET',
    )) as string | null;
    return previous ?? fresh;
  }

  private store(uid: string, entry: Entry): void {
    this.cache.delete(uid);
    this.cache.set(uid, entry);
    if (this.cache.size > this.maxEntries) {
      const oldest = this.cache.keys().next().value;
      if (oldest !== undefined) this.cache.delete(oldest);
    }
  }
}
