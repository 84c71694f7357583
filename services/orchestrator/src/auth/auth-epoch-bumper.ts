import type { Redis } from 'ioredis';
import { ChannelListener } from '@conveyor/db';
import type { Logger } from '@conveyor/logger';
import type { AuthEpochKeys } from '@conveyor/runtime';

/** Notified with a team's ID by the triggers of migration 20261125120000_auth_change_notify; empty = every team. */
const CHANNEL = 'auth_changes';

/**
 * Keeps the gateway's key cache honest (docs/service-trust.md): every change the database reports to what a key
 * authenticates as bumps its team's epoch in Redis, and every (re)connection of the LISTEN connection bumps the
 * global epoch, since changes made while nobody listened were not reported. Every orchestrator replica does this;
 * a change bumped more than once only costs the gateways a cache miss.
 */
export function authEpochBumper(deps: {
  databaseUrl: string;
  redis: Pick<Redis, 'incr'>;
  keys: AuthEpochKeys;
  logger: Logger;
}): ChannelListener {
  const { redis, keys, logger } = deps;
  const bump = (key: string) => redis.incr(key).then(() => undefined);
  return new ChannelListener({
    databaseUrl: deps.databaseUrl,
    channel: CHANNEL,
    onNotification: (teamId) => {
      // The Redis client queues commands while it reconnects; a bump fails only if the command itself does.
      bump(teamId ? keys.team(teamId) : keys.global).catch((err: Error) =>
        logger.error(
          { err: err.message, teamId },
          'auth epoch bump failed; cached keys live until their TTL',
        ),
      );
    },
    onListening: () => bump(keys.global),
    logger,
  });
}
