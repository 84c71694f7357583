import { z } from 'zod';
import * as ev from '../schemas/event-endpoint-schemas';
import { callerOf } from '../middleware/authenticate';
import {
  toEventAttemptJson,
  toEventEndpointJson,
  toEventEndpointWithSecretJson,
} from '../mappers/event-endpoint-resources';
import {
  createEventEndpointBody,
  eventAttemptsQuery,
  updateEventEndpointBody,
} from '../schemas/event-endpoint-schemas';
import { endpoint, json, noContent, type Endpoint } from './endpoint';

const ref = (req: { params: { endpointId: string } } & Parameters<typeof callerOf>[0]) => ({
  caller: callerOf(req),
  endpoint_id: req.params.endpointId,
});

/** Event endpoints (docs/events.md): admins manage, members read; the secret is shown on create and rotate only. */
export const eventEndpointEndpoints: Endpoint[] = [
  endpoint({
    method: 'post',
    path: '/event-endpoints',
    tag: 'Events',
    summary: 'Create an event endpoint',
    success: json(ev.eventEndpointWithSecretSchema, 'Created; the signing secret is shown this once.', 201),
    body: createEventEndpointBody,
    handle: async ({ req, res, body, api }) => {
      const created = await api.call(
        'events',
        'CreateEventEndpoint',
        {
          caller: callerOf(req),
          url: body.url,
          event_types: body.event_types,
          description: body.description ?? '',
        },
        req.id,
      );
      res.status(201).json(toEventEndpointWithSecretJson(created));
    },
  }),

  endpoint({
    method: 'get',
    path: '/event-endpoints',
    tag: 'Events',
    summary: "List the team's event endpoints",
    success: json(ev.eventEndpointListResponseSchema, 'Endpoints, without secrets, oldest first.'),
    handle: async ({ req, res, api }) => {
      const { endpoints } = await api.call('events', 'ListEventEndpoints', { caller: callerOf(req) }, req.id);
      res.json({ endpoints: endpoints.map(toEventEndpointJson) });
    },
  }),

  endpoint({
    method: 'get',
    path: '/event-endpoints/:endpointId',
    tag: 'Events',
    summary: 'Retrieve an event endpoint',
    success: json(ev.eventEndpointSchema, 'The endpoint.'),
    handle: async ({ req, res, api }) => {
      res.json(toEventEndpointJson(await api.call('events', 'GetEventEndpoint', ref(req), req.id)));
    },
  }),

  endpoint({
    method: 'patch',
    path: '/event-endpoints/:endpointId',
    tag: 'Events',
    summary: 'Update an event endpoint (url, event types, description, enabled)',
    success: json(ev.eventEndpointSchema, 'Updated.'),
    body: updateEventEndpointBody,
    handle: async ({ req, res, body, api }) => {
      const updated = await api.call(
        'events',
        'UpdateEventEndpoint',
        {
          ...ref(req),
          url: body.url,
          event_types: body.event_types ?? [],
          has_event_types: body.event_types !== undefined,
          enabled: body.enabled,
          description: body.description,
        },
        req.id,
      );
      res.json(toEventEndpointJson(updated));
    },
  }),

  endpoint({
    method: 'delete',
    path: '/event-endpoints/:endpointId',
    tag: 'Events',
    summary: 'Delete an event endpoint',
    success: noContent,
    handle: async ({ req, res, api }) => {
      await api.call('events', 'DeleteEventEndpoint', ref(req), req.id);
      res.status(204).end();
    },
  }),

  endpoint({
    method: 'post',
    path: '/event-endpoints/:endpointId/rotate-secret',
    tag: 'Events',
    summary: "Rotate an endpoint's signing secret (the old one signs alongside for a grace period)",
    success: json(ev.eventEndpointWithSecretSchema, 'Rotated; the new secret is shown this once.'),
    handle: async ({ req, res, api }) => {
      res.json(
        toEventEndpointWithSecretJson(
          await api.call('events', 'RotateEventEndpointSecret', ref(req), req.id),
        ),
      );
    },
  }),

  endpoint({
    method: 'get',
    path: '/event-endpoints/:endpointId/attempts',
    tag: 'Events',
    summary: "An endpoint's delivery attempts, newest first",
    success: json(ev.eventAttemptListResponseSchema, 'Attempts.'),
    query: eventAttemptsQuery,
    handle: async ({ req, res, query, api }) => {
      const { attempts } = await api.call(
        'events',
        'ListEventAttempts',
        { ...ref(req), limit: query.limit ?? 0 },
        req.id,
      );
      res.json({ attempts: attempts.map(toEventAttemptJson) });
    },
  }),

  endpoint({
    method: 'post',
    path: '/event-endpoints/:endpointId/events/:eventId/replay',
    tag: 'Events',
    summary: 'Send one event to the endpoint again (same webhook-id)',
    success: json(
      z.object({ event_id: z.string(), status: z.literal('pending') }),
      'Queued for delivery.',
      202,
    ),
    handle: async ({ req, res, api }) => {
      await api.call('events', 'ReplayEvent', { ...ref(req), event_id: req.params.eventId }, req.id);
      res.status(202).json({ event_id: req.params.eventId, status: 'pending' });
    },
  }),
];
