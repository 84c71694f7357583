import { AppError } from '@conveyor/errors';
import type { Prisma, PrismaClient, WebhookDelivery } from '@conveyor/db';
import type { PayloadFilter } from '@conveyor/payload-filter';
import type { Caller } from '../auth/caller';
import { describeErrors, matchTriggerPayload, parseWebhookTrigger } from '../automations/automation-trigger';
import { loadAutomation } from '../automations/automations';
import { loadWebhook } from './manage-webhooks';

export const DEFAULT_DELIVERY_PAGE = 50;
export const MAX_DELIVERY_PAGE = 200;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

interface Cursor {
  receivedAt: string;
  id: string;
}

function encodeCursor(row: WebhookDelivery): string {
  return Buffer.from(
    JSON.stringify({ receivedAt: row.receivedAt.toISOString(), id: row.id } satisfies Cursor),
  ).toString('base64url');
}

function decodeCursor(cursor: string): Cursor {
  try {
    const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Partial<Cursor>;
    if (
      typeof parsed.receivedAt === 'string' &&
      typeof parsed.id === 'string' &&
      UUID.test(parsed.id) &&
      !Number.isNaN(Date.parse(parsed.receivedAt))
    ) {
      return { receivedAt: parsed.receivedAt, id: parsed.id };
    }
  } catch {
    // fall through
  }
  throw new AppError('invalid_request', 'cursor is not a cursor returned by this endpoint');
}

/** Recent deliveries, newest first (received time, then entry ID), with keyset pagination. */
export async function listDeliveries(
  db: PrismaClient,
  caller: Caller,
  factoryId: string,
  uid: string,
  page: { limit?: number; cursor?: string },
): Promise<{ deliveries: WebhookDelivery[]; nextCursor?: string }> {
  await loadWebhook(db, caller, factoryId, uid);
  const limit =
    page.limit && page.limit > 0 ? Math.min(page.limit, MAX_DELIVERY_PAGE) : DEFAULT_DELIVERY_PAGE;
  const after = page.cursor ? decodeCursor(page.cursor) : undefined;
  const where: Prisma.WebhookDeliveryWhereInput = { webhookId: uid };
  if (after) {
    const at = new Date(after.receivedAt);
    where.OR = [{ receivedAt: { lt: at } }, { receivedAt: at, id: { lt: after.id } }];
  }
  const rows = await db.webhookDelivery.findMany({
    where,
    orderBy: [{ receivedAt: 'desc' }, { id: 'desc' }],
    take: limit + 1,
    omit: { payload: true },
  });
  const deliveries = rows.slice(0, limit) as WebhookDelivery[];
  const last = deliveries[deliveries.length - 1];
  return { deliveries, ...(rows.length > limit && last ? { nextCursor: encodeCursor(last) } : {}) };
}

/**
 * One delivery by its delivery ID (the Accepted entry when there is one, else the newest entry with that ID), or by
 * the log entry's own ID. Only Accepted entries keep their payload.
 */
export async function getDelivery(
  db: PrismaClient,
  caller: Caller,
  factoryId: string,
  uid: string,
  deliveryId: string,
): Promise<WebhookDelivery> {
  await loadWebhook(db, caller, factoryId, uid);
  const row =
    (await db.webhookDelivery.findFirst({ where: { webhookId: uid, acceptedDeliveryId: deliveryId } })) ??
    (await db.webhookDelivery.findFirst({
      where: { webhookId: uid, deliveryId },
      orderBy: [{ receivedAt: 'desc' }, { id: 'desc' }],
    })) ??
    (UUID.test(deliveryId)
      ? await db.webhookDelivery.findFirst({ where: { webhookId: uid, id: deliveryId } })
      : null);
  if (!row) throw new AppError('resource_not_found', 'Delivery not found');
  return row;
}

export interface FilterTestResult {
  wouldTrigger: boolean;
  webhookCheck: { passed: boolean; detail: string };
  payloadCheck: { passed: boolean; mismatches: string[]; detail: string };
}

/**
 * "Test filter": evaluates a trigger (an automation's, or one given inline) against a stored delivery. The webhook
 * check asks whether the trigger selects the delivery's webhook; the payload check runs the payload filter on the
 * stored body. Both must pass for "Would trigger". The automation's enabled flag is not part of the test.
 */
export async function testFilter(
  db: PrismaClient,
  caller: Caller,
  factoryId: string,
  uid: string,
  input: { deliveryId?: string; samplePayload?: unknown; automationId?: string; filter?: unknown },
): Promise<FilterTestResult> {
  if (!input.deliveryId === (input.samplePayload === undefined))
    throw new AppError('invalid_request', 'give either delivery_id or sample_payload');
  let webhookIds: string[] | undefined;
  let payloadFilter: PayloadFilter | undefined;
  if (input.automationId) {
    if (input.filter !== undefined)
      throw new AppError('invalid_request', 'give either automation_id or filter, not both');
    const automation = await loadAutomation(db, caller, factoryId, input.automationId);
    const trigger = parseWebhookTrigger(automation.trigger);
    if (!trigger.ok)
      throw new AppError(
        'invalid_request',
        `the automation's trigger is invalid: ${describeErrors(trigger.errors)}`,
      );
    webhookIds = trigger.trigger.filter.webhook_ids;
    payloadFilter = trigger.payloadFilter;
  } else if (input.filter !== undefined && input.filter !== null) {
    if (typeof input.filter !== 'object' || Array.isArray(input.filter))
      throw new AppError(
        'invalid_request',
        'filter must be an object {"webhook_ids": [...], "payload": {...}}',
      );
    // A trigger filter {webhook_ids?, payload?}; an object with any other key is taken as a bare payload filter.
    const given = input.filter as Record<string, unknown>;
    const isTriggerFilter = Object.keys(given).every((k) => k === 'webhook_ids' || k === 'payload');
    const filter = isTriggerFilter ? given : { payload: given };
    if (filter.webhook_ids !== undefined) {
      if (!Array.isArray(filter.webhook_ids) || !filter.webhook_ids.every((v) => typeof v === 'string'))
        throw new AppError('invalid_request', 'filter.webhook_ids must be a list of webhook UIDs');
      webhookIds = filter.webhook_ids as string[];
    }
    if (filter.payload !== undefined && filter.payload !== null) {
      const parsed = parseWebhookTrigger({
        provider: 'webhook',
        event: 'received',
        filter: { webhook_ids: [uid], payload: filter.payload },
      });
      if (!parsed.ok)
        throw new AppError('invalid_request', describeErrors(parsed.errors), {
          details: { errors: parsed.errors },
        });
      payloadFilter = parsed.payloadFilter;
    }
  }

  const payload = input.deliveryId
    ? await storedPayload(db, caller, factoryId, uid, input.deliveryId)
    : // A pasted sample (the console checks a filter as it is typed): the webhook is still looked up, so another
      // team's UID answers 404 as everywhere else.
      await loadWebhook(db, caller, factoryId, uid).then(() => input.samplePayload);

  const webhookCheck =
    webhookIds === undefined
      ? { passed: true, detail: 'no webhook_ids given: only the payload is checked' }
      : webhookIds.includes(uid)
        ? { passed: true, detail: `webhook ${uid} is selected by filter.webhook_ids` }
        : {
            passed: false,
            detail: `webhook ${uid} is not in filter.webhook_ids (${webhookIds.join(', ') || 'empty'})`,
          };

  // The filter was validated above, so applying it has no error of its own.
  const evaluation = matchTriggerPayload(payloadFilter, payload);
  const payloadCheck = {
    passed: evaluation.matched,
    mismatches: evaluation.mismatches,
    detail:
      payloadFilter === undefined
        ? 'no payload filter: every delivery matches'
        : evaluation.matched
          ? 'the payload matches the filter'
          : `the payload does not match: ${evaluation.mismatches.join('; ')}`,
  };
  return { wouldTrigger: webhookCheck.passed && payloadCheck.passed, webhookCheck, payloadCheck };
}

/** The body of a stored Accepted delivery (the others keep none), `undefined` when it is not JSON. */
async function storedPayload(
  db: PrismaClient,
  caller: Caller,
  factoryId: string,
  uid: string,
  deliveryId: string,
): Promise<unknown> {
  const delivery = await getDelivery(db, caller, factoryId, uid, deliveryId);
  if (delivery.label !== 'Accepted' || !delivery.payload) {
    throw new AppError(
      'operation_not_supported',
      `Delivery ${delivery.deliveryId} is "${delivery.label}": only Accepted deliveries keep a payload to test against`,
    );
  }
  try {
    return JSON.parse(Buffer.from(delivery.payload).toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}
