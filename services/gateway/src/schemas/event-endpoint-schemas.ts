import { z } from './zod';
import { EVENT_TYPE_FILTERS } from '@conveyor/run-events';

/** Event endpoints (docs/events.md): requests and responses. */

const url = z.string().min(1).max(2048).describe('https (http only for hosts the operator allow-lists)');
const eventTypes = z
  .array(z.enum(EVENT_TYPE_FILTERS))
  .min(1)
  .max(EVENT_TYPE_FILTERS.length)
  .describe('`run.<state>`, `run.artifact_reported`, or `*` for every type');
const description = z.string().max(500);

export const createEventEndpointBody = z
  .object({ url, event_types: eventTypes, description })
  .partial({
    description: true,
  })
  .strict()
  .openapi('CreateEventEndpointBody');

export const updateEventEndpointBody = z
  .object({ url, event_types: eventTypes, description, enabled: z.boolean() })
  .partial()
  .strict()
  .openapi('UpdateEventEndpointBody');

export const eventAttemptsQuery = z
  .object({ limit: z.coerce.number().int().min(1).max(200).optional() })
  .strict();

export const eventEndpointSchema = z
  .object({
    endpoint_id: z.string(),
    url: z.string(),
    event_types: z.array(z.string()),
    enabled: z.boolean(),
    description: z.string().nullable(),
    disabled_reason: z
      .string()
      .nullable()
      .describe('Why the platform disabled the endpoint (410, failing for days)'),
    created_at: z.string(),
    updated_at: z.string(),
    previous_secret_expires_at: z
      .string()
      .nullable()
      .describe('Until then the rotated-out secret signs alongside the new one'),
  })
  .openapi('EventEndpoint');
export const eventEndpointWithSecretSchema = eventEndpointSchema
  .extend({
    secret: z.string().describe('`whsec_…`: shown this once'),
  })
  .openapi('EventEndpointWithSecret');
export const eventEndpointListResponseSchema = z
  .object({ endpoints: z.array(eventEndpointSchema) })
  .openapi('EventEndpointListResponse');

export const eventAttemptSchema = z
  .object({
    event_id: z.string().describe('The `webhook-id` header'),
    event_type: z.string(),
    run_id: z.string(),
    attempted_at: z.string(),
    status_code: z.number().int().nullable().describe('null when no response arrived'),
    latency_ms: z.number().int(),
    error: z.string().nullable(),
    next_attempt_at: z.string().nullable().describe('null when no retry is scheduled'),
    delivery_status: z.enum(['pending', 'succeeded', 'failed']),
  })
  .openapi('EventAttempt');
export const eventAttemptListResponseSchema = z
  .object({ attempts: z.array(eventAttemptSchema) })
  .openapi('EventAttemptListResponse');
