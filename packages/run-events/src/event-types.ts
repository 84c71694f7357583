/**
 * The outbound event types (docs/events.md): each state a run enters that a caller cares about, and each artifact
 * it reports. One list for the gateway's schema and the orchestrator's check.
 */
export const RUN_EVENT_TYPES = [
  'run.queued',
  'run.inprogress',
  'run.succeeded',
  'run.failed',
  'run.error',
  'run.cancelled',
  'run.blocked',
  'run.artifact_reported',
] as const;

/** An endpoint subscribes to listed types, or to every type with `*`. */
export const EVENT_TYPE_FILTERS = [...RUN_EVENT_TYPES, '*'] as const;
