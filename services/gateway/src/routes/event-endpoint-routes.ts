import { Router } from 'express';
import type { OrchestratorApi } from '../orchestrator-api';
import { callerOf } from '../middleware/authenticate';
import {
  toEventAttemptJson,
  toEventEndpointJson,
  toEventEndpointWithSecretJson,
} from '../mappers/event-endpoint-resources';
import { parseBody, parseQuery } from '../validation';
import {
  createEventEndpointBody,
  eventAttemptsQuery,
  updateEventEndpointBody,
} from '../schemas/event-endpoint-schemas';

/** Event endpoints (docs/events.md): admins manage, members read; the secret is shown on create and rotate only. */
export function eventEndpointRoutes(api: OrchestratorApi): Router {
  const router = Router();
  const ref = (req: { params: { endpointId: string } } & Parameters<typeof callerOf>[0]) => ({
    caller: callerOf(req),
    endpoint_id: req.params.endpointId,
  });

  router.post('/event-endpoints', async (req, res) => {
    const body = parseBody(createEventEndpointBody, req.body);
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
  });

  router.get('/event-endpoints', async (req, res) => {
    const { endpoints } = await api.call('events', 'ListEventEndpoints', { caller: callerOf(req) }, req.id);
    res.json({ endpoints: endpoints.map(toEventEndpointJson) });
  });

  router.get('/event-endpoints/:endpointId', async (req, res) => {
    res.json(toEventEndpointJson(await api.call('events', 'GetEventEndpoint', ref(req), req.id)));
  });

  router.patch('/event-endpoints/:endpointId', async (req, res) => {
    const body = parseBody(updateEventEndpointBody, req.body);
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
  });

  router.delete('/event-endpoints/:endpointId', async (req, res) => {
    await api.call('events', 'DeleteEventEndpoint', ref(req), req.id);
    res.status(204).end();
  });

  router.post('/event-endpoints/:endpointId/rotate-secret', async (req, res) => {
    res.json(
      toEventEndpointWithSecretJson(await api.call('events', 'RotateEventEndpointSecret', ref(req), req.id)),
    );
  });

  router.get('/event-endpoints/:endpointId/attempts', async (req, res) => {
    const query = parseQuery(eventAttemptsQuery, req.query);
    const { attempts } = await api.call(
      'events',
      'ListEventAttempts',
      { ...ref(req), limit: query.limit ?? 0 },
      req.id,
    );
    res.json({ attempts: attempts.map(toEventAttemptJson) });
  });

  router.post('/event-endpoints/:endpointId/events/:eventId/replay', async (req, res) => {
    await api.call('events', 'ReplayEvent', { ...ref(req), event_id: req.params.eventId }, req.id);
    res.status(202).json({ event_id: req.params.eventId, status: 'pending' });
  });

  return router;
}
