/**
 * Redis keys of the authentication epochs (docs/service-trust.md, "The gateway's key cache"): the orchestrator
 * increments a team's when what one of its keys authenticates as may have changed, and the global one when it may
 * have missed such a change; the gateway serves a cached key only while both are as they were when it was cached.
 * Gateways and orchestrators of one installation must use the same prefix (`AUTH_EPOCH_REDIS_PREFIX`).
 */
export const DEFAULT_AUTH_EPOCH_PREFIX = 'conveyor:auth-epoch';

export interface AuthEpochKeys {
  global: string;
  team(teamId: string): string;
}

export const authEpochKeys = (prefix: string): AuthEpochKeys => ({
  global: prefix,
  team: (teamId) => `${prefix}:${teamId}`,
});
