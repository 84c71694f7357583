import { AppError, notFound } from '@conveyor/errors';
import { newId, type EventEndpoint as EndpointRow, type PrismaClient } from '@conveyor/db';
import { generateStandardWebhooksSecret } from '@conveyor/webhook-auth';
import type { Caller } from '../auth/caller';
import { requireFactoryManager } from '../factories/permissions';
import type { SecretCipher } from '../secrets/secret-cipher';
import {
  endpointView,
  type CreateEventEndpointInput,
  type EndpointWithSecret,
  type EventEndpointView,
  type UpdateEventEndpointInput,
} from './event-endpoint-view';
import { encryptEndpointSecret } from './endpoint-secret';
import { parseEndpointUrl, resolveEndpoint, type EndpointUrlRules } from './endpoint-url';
import { validateEventTypes } from './event-types';

export interface EventEndpointDeps {
  db: PrismaClient;
  cipher: SecretCipher;
  urls: EndpointUrlRules;
  /** How long a rotated-out secret keeps signing (EVENT_SECRET_GRACE_MS). */
  secretGraceMs: number;
  now?: () => Date;
}

const MAX_DESCRIPTION = 500;
/** Endpoints per team: each one multiplies every event's deliveries. */
const MAX_ENDPOINTS_PER_TEAM = 50;

function validateDescription(description: string): string | null {
  if (description.length > MAX_DESCRIPTION)
    throw new AppError('invalid_request', `description must be at most ${MAX_DESCRIPTION} characters`);
  return description || null;
}

/** A URL an endpoint may have: its scheme allowed and its host resolving only to addresses outbound calls may reach. */
async function checkedUrl(deps: EventEndpointDeps, raw: string): Promise<string> {
  const url = parseEndpointUrl(raw, deps.urls);
  await resolveEndpoint(url, deps.urls);
  return url.toString();
}

/** The caller's team's endpoint; another team's answers like a missing one, so IDs reveal nothing across teams. */
export async function findEndpoint(
  db: PrismaClient,
  caller: Caller,
  endpointId: string,
): Promise<EndpointRow> {
  const row = await db.eventEndpoint.findFirst({ where: { id: endpointId, teamId: caller.team_id } });
  if (!row) throw notFound('Event endpoint');
  return row;
}

export async function createEventEndpoint(
  deps: EventEndpointDeps,
  caller: Caller,
  req: CreateEventEndpointInput,
): Promise<EndpointWithSecret> {
  requireFactoryManager(caller, 'Creating an event endpoint');
  const eventTypes = validateEventTypes(req.event_types);
  const description = validateDescription(req.description);
  const url = await checkedUrl(deps, req.url);
  const count = await deps.db.eventEndpoint.count({ where: { teamId: caller.team_id } });
  if (count >= MAX_ENDPOINTS_PER_TEAM)
    throw new AppError('conflict', `A team may have at most ${MAX_ENDPOINTS_PER_TEAM} event endpoints`);
  const id = newId('ep');
  const secret = generateStandardWebhooksSecret();
  const row = await deps.db.eventEndpoint.create({
    data: {
      id,
      teamId: caller.team_id,
      url,
      description,
      eventTypes,
      createdById: caller.principal_id || null,
      ...encryptEndpointSecret(deps.cipher, id, secret),
    },
  });
  return { endpoint: endpointView(row), secret };
}

export async function listEventEndpoints(db: PrismaClient, caller: Caller): Promise<EventEndpointView[]> {
  const rows = await db.eventEndpoint.findMany({
    where: { teamId: caller.team_id },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
  });
  return rows.map(endpointView);
}

export async function getEventEndpoint(
  db: PrismaClient,
  caller: Caller,
  endpointId: string,
): Promise<EventEndpointView> {
  return endpointView(await findEndpoint(db, caller, endpointId));
}

/** Enabling clears what the platform said when it disabled the endpoint, and starts its failure clock afresh. */
export async function updateEventEndpoint(
  deps: EventEndpointDeps,
  caller: Caller,
  req: UpdateEventEndpointInput,
): Promise<EventEndpointView> {
  const existing = await findEndpoint(deps.db, caller, req.endpoint_id);
  requireFactoryManager(caller, 'Updating an event endpoint');
  const row = await deps.db.eventEndpoint.update({
    where: { id: existing.id },
    data: {
      ...(req.url !== undefined ? { url: await checkedUrl(deps, req.url) } : {}),
      ...(req.has_event_types ? { eventTypes: validateEventTypes(req.event_types) } : {}),
      ...(req.description !== undefined ? { description: validateDescription(req.description) } : {}),
      ...(req.enabled !== undefined ? { enabled: req.enabled } : {}),
      ...(req.enabled === true ? { disabledReason: null, failingSince: null } : {}),
    },
  });
  return endpointView(row);
}

export async function deleteEventEndpoint(
  db: PrismaClient,
  caller: Caller,
  endpointId: string,
): Promise<void> {
  const existing = await findEndpoint(db, caller, endpointId);
  requireFactoryManager(caller, 'Deleting an event endpoint');
  await db.eventEndpoint.delete({ where: { id: existing.id } });
}

/**
 * A new secret signs from now on; the current one becomes the previous and keeps signing alongside it for the grace
 * period, so receivers can switch without dropping events. A rotation within the grace period drops the oldest.
 */
export async function rotateEventEndpointSecret(
  deps: EventEndpointDeps,
  caller: Caller,
  endpointId: string,
): Promise<EndpointWithSecret> {
  const existing = await findEndpoint(deps.db, caller, endpointId);
  requireFactoryManager(caller, 'Rotating an event endpoint secret');
  const now = deps.now?.() ?? new Date();
  const secret = generateStandardWebhooksSecret();
  const row = await deps.db.eventEndpoint.update({
    where: { id: existing.id },
    data: {
      previousCiphertext: existing.secretCiphertext,
      previousKeyId: existing.secretKeyId,
      previousSecretUntil: new Date(now.getTime() + deps.secretGraceMs),
      ...encryptEndpointSecret(deps.cipher, existing.id, secret),
    },
  });
  return { endpoint: endpointView(row), secret };
}
