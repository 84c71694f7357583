import { z } from 'zod';
import {
  matchPayload,
  parsePayloadFilter,
  type FilterError,
  type MatchResult,
  type PayloadFilter,
} from '@conveyor/payload-filter';

/**
 * The Webhook trigger of an automation, as written in the API or in `automations/<name>.yaml`:
 * `{provider: webhook, event: received, filter: {webhook_ids: [UID, ...], payload?: <payload filter>}}`.
 */
export interface WebhookTrigger {
  provider: 'webhook';
  event: 'received';
  filter: { webhook_ids: string[]; payload?: Record<string, unknown> };
}

/** A valid trigger comes with its payload filter compiled, so a delivery is matched without parsing it again. */
export type TriggerParse =
  | { ok: true; trigger: WebhookTrigger; payloadFilter: PayloadFilter | undefined }
  | { ok: false; errors: FilterError[] };

const WEBHOOK_UID = /^wh_[A-Za-z0-9]{1,64}$/;

const triggerSchema = z
  .object(
    {
      provider: z.literal('webhook', { errorMap: () => ({ message: 'must be "webhook"' }) }),
      event: z.literal('received', { errorMap: () => ({ message: 'must be "received"' }) }),
      filter: z
        .object(
          {
            webhook_ids: z
              .array(z.string().regex(WEBHOOK_UID, 'must be a webhook UID (wh_...), never a file name'), {
                invalid_type_error: 'must be a list of webhook UIDs',
              })
              .min(1, 'must list at least one webhook UID'),
            payload: z.unknown().optional(),
          },
          { invalid_type_error: 'must be an object with webhook_ids and an optional payload' },
        )
        .strict(),
    },
    { invalid_type_error: 'must be an object' },
  )
  .strict();

/** Validates a trigger, collecting every problem with its path (payload filter paths come from @conveyor/payload-filter). */
export function parseWebhookTrigger(input: unknown, path = 'trigger'): TriggerParse {
  const parsed = triggerSchema.safeParse(input);
  if (!parsed.success) {
    return {
      ok: false,
      errors: parsed.error.issues.map((issue) => ({
        path: [path, ...issue.path].join('.'),
        message:
          issue.code === 'unrecognized_keys' ? `unknown key(s) ${issue.keys.join(', ')}` : issue.message,
      })),
    };
  }
  const { filter } = parsed.data;
  const trigger: WebhookTrigger = {
    provider: 'webhook',
    event: 'received',
    filter: { webhook_ids: [...new Set(filter.webhook_ids)] },
  };
  if (filter.payload === undefined || filter.payload === null)
    return { ok: true, trigger, payloadFilter: undefined };
  const payload = parsePayloadFilter(filter.payload, { path: `${path}.filter.payload` });
  if (!payload.ok) return { ok: false, errors: payload.errors };
  trigger.filter.payload = filter.payload as Record<string, unknown>;
  return { ok: true, trigger, payloadFilter: payload.filter };
}

/** A delivery's payload against a trigger's compiled payload filter; no filter matches every delivery. */
export function matchTriggerPayload(payloadFilter: PayloadFilter | undefined, payload: unknown): MatchResult {
  return payloadFilter ? matchPayload(payloadFilter, payload) : { matched: true, mismatches: [] };
}

export function describeErrors(errors: FilterError[]): string {
  return errors.map((e) => `${e.path}: ${e.message}`).join('; ');
}
