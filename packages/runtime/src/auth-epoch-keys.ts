/**
 * Redis keys of the authentication epochs (docs/service-trust.md, "The gateway's key cache"): the orchestrator
 * increments a team's when what one of its keys authenticates as may have changed, and the global one when it may
 * have missed such a change; the gateway serves a cached key only while both are as they were when it was cached.
 */
export const GLOBAL_AUTH_EPOCH_KEY = 'conveyor:auth-epoch';
export const teamAuthEpochKey = (teamId: string): string => `${GLOBAL_AUTH_EPOCH_KEY}:${teamId}`;
