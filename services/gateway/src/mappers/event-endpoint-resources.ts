import type {
  EventAttempt__Output,
  EventEndpoint__Output,
  EventEndpointWithSecret__Output,
} from '@conveyor/proto';

const orNull = (s: string): string | null => s || null;

export function toEventEndpointJson(e: EventEndpoint__Output | null): Record<string, unknown> {
  if (!e) return {};
  return {
    endpoint_id: e.id,
    url: e.url,
    event_types: e.event_types,
    enabled: e.enabled,
    description: orNull(e.description),
    disabled_reason: orNull(e.disabled_reason),
    created_at: e.created_at,
    updated_at: e.updated_at,
    previous_secret_expires_at: orNull(e.previous_secret_expires_at),
  };
}

export const toEventEndpointWithSecretJson = (
  e: EventEndpointWithSecret__Output,
): Record<string, unknown> => ({
  ...toEventEndpointJson(e.endpoint),
  secret: e.secret,
});

export const toEventAttemptJson = (a: EventAttempt__Output): Record<string, unknown> => ({
  event_id: a.event_id,
  event_type: a.event_type,
  run_id: a.run_id,
  attempted_at: a.attempted_at,
  status_code: a.status_code || null,
  latency_ms: a.latency_ms,
  error: orNull(a.error),
  next_attempt_at: orNull(a.next_attempt_at),
  delivery_status: a.delivery_status,
});
