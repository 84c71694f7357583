import { z } from './zod';
import { jsonObjectSchema } from './common-schemas';
import { agentConfigResponseSchema } from './run-schemas';

/** Response shapes of factories, webhooks, deliveries, automations and secrets (docs/webhooks.md). */

export const factorySchema = z
  .object({
    factory_id: z.string(),
    name: z.string(),
    webhook_count: z.number().int(),
    automation_count: z.number().int(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi('Factory');
export const factoryListResponseSchema = z
  .object({ factories: z.array(factorySchema) })
  .openapi('FactoryListResponse');

export const webhookSchema = z
  .object({
    webhook_uid: z.string(),
    factory_id: z.string(),
    name: z.string(),
    auth_mode: z.enum(['token', 'url_token', 'signature']),
    signature_scheme: z.string().nullable(),
    secret_name: z.string(),
    delivery_id_header: z.string().nullable(),
    enabled: z.boolean(),
    url: z.string(),
    secret_status: z.string(),
    managed_by: z.string(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi('Webhook');
export const webhookListResponseSchema = z
  .object({ webhooks: z.array(webhookSchema) })
  .openapi('WebhookListResponse');
/** Creation and rotation: the generated secret and the sender's URL are shown this once. */
export const webhookWithSecretSchema = webhookSchema
  .partial()
  .extend({ secret: z.string().optional(), ingress_url: z.string() })
  .openapi('WebhookWithSecret');

const deliverySchema = z.object({
  id: z.string(),
  delivery_id: z.string(),
  label: z.string(),
  size_bytes: z.number().int(),
  received_at: z.string(),
  identity_source: z.string(),
  reason: z.string().nullable(),
  run_ids: z.array(z.string()),
  has_payload: z.boolean(),
  processed_at: z.string().nullable(),
});
export const deliveryListResponseSchema = z
  .object({
    deliveries: z.array(deliverySchema),
    next_cursor: z.string().optional(),
  })
  .openapi('DeliveryListResponse');
export const deliveryDetailSchema = deliverySchema
  .extend({ payload: z.unknown(), outcome: z.unknown() })
  .openapi('DeliveryDetail');

export const testFilterResponseSchema = z
  .object({
    result: z.enum(['Would trigger', 'Would not trigger']),
    would_trigger: z.boolean(),
    webhook_check: z.object({ passed: z.boolean(), detail: z.string() }),
    payload_check: z.object({
      passed: z.boolean(),
      detail: z.string(),
      mismatches: z.array(z.string()),
      error: z.string().optional(),
    }),
  })
  .openapi('TestFilterResponse');

export const automationSchema = z
  .object({
    automation_id: z.string(),
    factory_id: z.string(),
    name: z.string(),
    prompt: z.string(),
    agent_config: agentConfigResponseSchema,
    enabled: z.boolean(),
    trigger: jsonObjectSchema.nullable(),
    managed_by: z.string(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi('Automation');
export const automationListResponseSchema = z
  .object({ automations: z.array(automationSchema) })
  .openapi('AutomationListResponse');

export const applyResponseSchema = z
  .object({
    webhooks: z.array(
      z.object({ name: z.string(), webhook_uid: z.string(), action: z.string(), url: z.string() }),
    ),
    automations: z.array(z.object({ name: z.string(), automation_id: z.string(), action: z.string() })),
    integrations: z.array(
      z.object({
        name: z.string(),
        kind: z.enum(['github_app', 'slack', 'linear']),
        integration_id: z.string(),
        action: z.string(),
        url: z.string().describe("The integration's webhook URL, to set at the provider"),
        changed: z.array(z.string()).optional().describe('When updated: the fields that changed'),
      }),
    ),
  })
  .openapi('ApplyResponse');

export const secretSchema = z
  .object({
    name: z.string(),
    created_at: z.string(),
    updated_at: z.string(),
    used_by_webhooks: z.array(z.string()),
  })
  .openapi('Secret');
export const secretListResponseSchema = z
  .object({ secrets: z.array(secretSchema) })
  .openapi('SecretListResponse');
