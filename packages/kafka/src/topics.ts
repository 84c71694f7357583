/** Webhook deliveries accepted at the edge, keyed by webhook UID so one webhook's deliveries share a partition. */
export const DEFAULT_DELIVERIES_TOPIC = 'conveyor.webhook-deliveries.v1';

export const DEFAULT_ORCHESTRATOR_CONSUMER_GROUP = 'conveyor-orchestrator';
