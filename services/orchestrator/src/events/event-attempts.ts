import { notFound } from '@conveyor/errors';
import type { PrismaClient } from '@conveyor/db';
import type { Caller } from '../auth/caller';
import { requireFactoryManager } from '../factories/permissions';
import type { EventAttemptView } from './event-endpoint-view';
import { findEndpoint } from './manage-event-endpoints';

const DEFAULT_LIMIT = 50;
const MAX_LIMIT = 200;

/** The endpoint's attempts, newest first, each with its event and what happens next. */
export async function listEventAttempts(
  db: PrismaClient,
  caller: Caller,
  endpointId: string,
  limit: number,
): Promise<EventAttemptView[]> {
  const endpoint = await findEndpoint(db, caller, endpointId);
  const rows = await db.eventDeliveryAttempt.findMany({
    where: { endpointId: endpoint.id },
    orderBy: { id: 'desc' },
    take: Math.min(limit > 0 ? limit : DEFAULT_LIMIT, MAX_LIMIT),
    include: { delivery: { include: { event: { select: { id: true, type: true, runId: true } } } } },
  });
  return rows.map((a) => ({
    eventId: a.delivery.event.id,
    eventType: a.delivery.event.type,
    runId: a.delivery.event.runId,
    attemptedAt: a.attemptedAt,
    statusCode: a.statusCode,
    latencyMs: a.latencyMs,
    error: a.error,
    nextAttemptAt: a.nextAttemptAt,
    deliveryStatus: a.delivery.status,
  }));
}

/**
 * Sends one event of the endpoint's team to the endpoint again, at once and with the same `webhook-id` and body (a
 * receiver that deduplicates on the ID sees a repeat). The delivery starts over: a full retry schedule if it fails.
 */
export async function replayEvent(
  db: PrismaClient,
  caller: Caller,
  endpointId: string,
  eventId: string,
): Promise<void> {
  const endpoint = await findEndpoint(db, caller, endpointId);
  requireFactoryManager(caller, 'Replaying an event');
  const event = await db.outboundEvent.findFirst({ where: { id: eventId, teamId: endpoint.teamId } });
  if (!event) throw notFound('Event');
  const now = new Date();
  await db.eventDelivery.upsert({
    where: { endpointId_eventId: { endpointId: endpoint.id, eventId: event.id } },
    create: { endpointId: endpoint.id, eventId: event.id, runId: event.runId, nextAttemptAt: now },
    update: { status: 'pending', attempts: 0, nextAttemptAt: now },
  });
}
