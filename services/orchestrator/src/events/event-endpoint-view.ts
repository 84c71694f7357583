import type { EventEndpoint } from '@conveyor/db';

/** An endpoint as callers see it: never its secrets, only until when a rotated-out one still signs. */
export interface EventEndpointView {
  id: string;
  url: string;
  eventTypes: string[];
  enabled: boolean;
  description: string | null;
  disabledReason: string | null;
  createdAt: Date;
  updatedAt: Date;
  previousSecretExpiresAt: Date | null;
}

/** An endpoint with its signing secret: the answer of create and rotate, the only time the secret is shown. */
export interface EndpointWithSecret {
  endpoint: EventEndpointView;
  secret: string;
}

/** One delivery attempt of an endpoint, with its event and what happens next. */
export interface EventAttemptView {
  eventId: string;
  eventType: string;
  runId: string;
  attemptedAt: Date;
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
  nextAttemptAt: Date | null;
  deliveryStatus: string;
}

/** What creating an endpoint asks for; field names follow the API, as `Caller` does. */
export interface CreateEventEndpointInput {
  url: string;
  event_types: string[];
  description: string;
}

/** Absent fields keep their stored value; event types are replaced only when `has_event_types`. */
export interface UpdateEventEndpointInput {
  endpoint_id: string;
  url?: string;
  event_types: string[];
  has_event_types: boolean;
  enabled?: boolean;
  description?: string;
}

export function endpointView(row: EventEndpoint): EventEndpointView {
  return {
    id: row.id,
    url: row.url,
    eventTypes: row.eventTypes,
    enabled: row.enabled,
    description: row.description,
    disabledReason: row.disabledReason,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    previousSecretExpiresAt: row.previousCiphertext ? row.previousSecretUntil : null,
  };
}
