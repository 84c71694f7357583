import { Redis } from 'ioredis';
import { ChannelListener, createPrismaClient, type PrismaClient } from '@conveyor/db';
import type { Logger } from '@conveyor/logger';
import { logConnectionOutages, partOf, type ServiceParts } from '@conveyor/runtime';
import { configuredBlobStore } from '../blobs/configured-blob-store';
import type { OrchestratorConfig } from '../config';
import { EgressPolicy } from '../egress/egress-policy';
import { SecretCipher } from '../secrets/secret-cipher';

/** PostgreSQL: what every part of the orchestrator keeps its state in; closed last. */
export async function connectPostgres(
  config: OrchestratorConfig,
  parts: ServiceParts,
): Promise<PrismaClient> {
  const db = createPrismaClient(config.DATABASE_URL);
  await parts.add({
    name: 'postgres',
    ready: async () => {
      await db.$queryRaw`SELECT 1`;
    },
    stop: () => db.$disconnect(),
  });
  return db;
}

/** Redis: the run queue, schedules, auth epochs, webhook versions and the integrations' run budgets. */
export async function connectRedis(
  config: OrchestratorConfig,
  logger: Logger,
  parts: ServiceParts,
): Promise<Redis> {
  // BullMQ needs maxRetriesPerRequest: null so blocking commands survive reconnects.
  const redis = new Redis(config.REDIS_URL, { maxRetriesPerRequest: null });
  logConnectionOutages(redis, logger, 'redis (run queue, schedules, auth epochs)');
  await parts.add({
    name: 'redis',
    ready: async () => {
      await redis.ping();
    },
    stop: () => redis.quit(),
  });
  return redis;
}

/** The integrations' providers (also the CLI's, for `conveyor apply`), under the egress rules. */
export function providerApis(
  config: Pick<
    OrchestratorConfig,
    'EGRESS_ALLOWED_ADDRESSES' | 'GITHUB_API_URL' | 'SLACK_API_URL' | 'LINEAR_API_URL'
  >,
  policy = new EgressPolicy(config.EGRESS_ALLOWED_ADDRESSES),
) {
  return {
    github: { baseUrl: config.GITHUB_API_URL, policy, timeoutMs: 30_000 },
    slack: { baseUrl: config.SLACK_API_URL, timeoutMs: 10_000 },
    linear: { url: config.LINEAR_API_URL, policy, timeoutMs: 30_000 },
  };
}

/** What the orchestrator reaches beyond its own stores, and the rules it reaches it by; nothing here connects. */
export function outsideWorld(config: OrchestratorConfig, db: PrismaClient) {
  const policy = new EgressPolicy(config.EGRESS_ALLOWED_ADDRESSES);
  return {
    blobs: configuredBlobStore(db, config),
    cipher: SecretCipher.fromConfig(config),
    egress: { policy, allowedSchemes: config.GIT_ALLOWED_SCHEMES, allowLocal: config.GIT_ALLOW_LOCAL_URLS },
    ...providerApis(config, policy),
    eventUrls: { policy, httpHosts: config.EVENT_HTTP_ALLOWED_HOSTS },
  };
}

export type OutsideWorld = ReturnType<typeof outsideWorld>;

/**
 * A LISTEN connection on a channel a trigger notifies, kicking the loop that sends what the trigger wrote (and once
 * listening, for what was written meanwhile); a lost notification waits for the loop's next poll at worst.
 */
export async function kickOnNotification(
  config: OrchestratorConfig,
  logger: Logger,
  parts: ServiceParts,
  listener: { name: string; channel: string; kick: () => Promise<void> },
): Promise<void> {
  const channel = new ChannelListener({
    databaseUrl: config.DATABASE_URL,
    channel: listener.channel,
    onNotification: () => void listener.kick(),
    onListening: () => listener.kick(),
    logger: logger.child({ component: listener.name.replace(' ', '-') }),
  });
  await parts.add(partOf(listener.name, channel));
}
