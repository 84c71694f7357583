import type { Logger } from '@conveyor/logger';
import type { EventEndpointServiceHandlers } from '@conveyor/proto';
import type { EndpointWithSecret } from '../../events/event-endpoint-view';
import { attemptToProto, endpointToProto } from '../mappers/event-endpoint-to-proto';
import { requireCaller } from '../require-caller';
import { unary } from '../unary-handler';
import { listEventAttempts, replayEvent } from '../../events/event-attempts';
import {
  createEventEndpoint,
  deleteEventEndpoint,
  getEventEndpoint,
  listEventEndpoints,
  rotateEventEndpointSecret,
  updateEventEndpoint,
  type EventEndpointDeps,
} from '../../events/manage-event-endpoints';

const withSecretToProto = ({ endpoint, secret }: EndpointWithSecret) => ({
  endpoint: endpointToProto(endpoint),
  secret,
});

/** EventEndpointService: each RPC is one domain function behind the shared gRPC error wrapper. */
export function eventEndpointHandlers(
  deps: EventEndpointDeps & { logger: Logger; eventsChanged: () => void },
): EventEndpointServiceHandlers {
  const { db, logger } = deps;
  return {
    CreateEventEndpoint: unary(logger, 'CreateEventEndpoint', (req) =>
      createEventEndpoint(deps, requireCaller(req.caller), req).then(withSecretToProto),
    ),
    ListEventEndpoints: unary(logger, 'ListEventEndpoints', async (req) => ({
      endpoints: (await listEventEndpoints(db, requireCaller(req.caller))).map(endpointToProto),
    })),
    GetEventEndpoint: unary(logger, 'GetEventEndpoint', (req) =>
      getEventEndpoint(db, requireCaller(req.caller), req.endpoint_id).then(endpointToProto),
    ),
    UpdateEventEndpoint: unary(logger, 'UpdateEventEndpoint', async (req) => {
      const endpoint = await updateEventEndpoint(deps, requireCaller(req.caller), req);
      // Re-enabled: what waited for it is due now.
      deps.eventsChanged();
      return endpointToProto(endpoint);
    }),
    DeleteEventEndpoint: unary(logger, 'DeleteEventEndpoint', async (req) => {
      await deleteEventEndpoint(db, requireCaller(req.caller), req.endpoint_id);
      return {};
    }),
    RotateEventEndpointSecret: unary(logger, 'RotateEventEndpointSecret', (req) =>
      rotateEventEndpointSecret(deps, requireCaller(req.caller), req.endpoint_id).then(withSecretToProto),
    ),
    ListEventAttempts: unary(logger, 'ListEventAttempts', async (req) => ({
      attempts: (await listEventAttempts(db, requireCaller(req.caller), req.endpoint_id, req.limit)).map(
        attemptToProto,
      ),
    })),
    ReplayEvent: unary(logger, 'ReplayEvent', async (req) => {
      await replayEvent(db, requireCaller(req.caller), req.endpoint_id, req.event_id);
      deps.eventsChanged();
      return {};
    }),
  };
}
