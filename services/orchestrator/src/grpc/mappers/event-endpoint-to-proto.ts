import type { EventAttempt, EventEndpoint } from '@conveyor/proto';
import type { EventAttemptView, EventEndpointView } from '../../events/event-endpoint-view';
import { iso } from './iso';

export function endpointToProto(view: EventEndpointView): EventEndpoint {
  return {
    id: view.id,
    url: view.url,
    event_types: view.eventTypes,
    enabled: view.enabled,
    description: view.description ?? '',
    disabled_reason: view.disabledReason ?? '',
    created_at: iso(view.createdAt),
    updated_at: iso(view.updatedAt),
    previous_secret_expires_at: iso(view.previousSecretExpiresAt),
  };
}

export function attemptToProto(view: EventAttemptView): EventAttempt {
  return {
    event_id: view.eventId,
    event_type: view.eventType,
    run_id: view.runId,
    attempted_at: iso(view.attemptedAt),
    status_code: view.statusCode ?? 0,
    latency_ms: view.latencyMs,
    error: view.error ?? '',
    next_attempt_at: iso(view.nextAttemptAt),
    delivery_status: view.deliveryStatus,
  };
}
