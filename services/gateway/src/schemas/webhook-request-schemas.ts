import { z } from './zod';
import { agentConfigSchema } from './agent-config';

/** Request bodies and queries of factories, webhooks, automations and secrets (docs/webhooks.md). */

export const createFactoryBody = z
  .object({ name: z.string().trim().min(1).max(100) })
  .strict()
  .openapi('CreateFactoryBody');

const MAX_DEFINITION_BYTES = 256 * 1024;
const definitionContent = z
  .string()
  .max(MAX_DEFINITION_BYTES, `must be at most ${MAX_DEFINITION_BYTES} characters`);

/**
 * Body of POST /factories/{id}/apply: the definition files themselves, either as paths and contents
 * (`webhooks/<name>.yaml`, `automations/<name>.yaml`) or grouped by kind with the name and the YAML text.
 */
export const applyBody = z
  .object({
    files: z
      .array(z.object({ path: z.string().min(1).max(500), content: definitionContent }).strict())
      .max(200)
      .optional(),
    webhooks: z
      .array(z.object({ name: z.string().min(1).max(64), yaml: definitionContent }).strict())
      .max(200)
      .optional(),
    automations: z
      .array(z.object({ name: z.string().min(1).max(64), yaml: definitionContent }).strict())
      .max(200)
      .optional(),
  })
  .strict()
  .refine((b) => (b.files?.length ?? 0) + (b.webhooks?.length ?? 0) + (b.automations?.length ?? 0) > 0, {
    message: 'give at least one definition file',
    path: ['files'],
  })
  .openapi('ApplyBody');

export const createWebhookBody = z
  .object({
    name: z.string().trim().min(1).max(100),
    auth_mode: z.enum(['token', 'url_token', 'signature']).optional(),
    signature_scheme: z.string().min(1).max(64).optional(),
    provider_secret: z.string().max(8192).optional(),
    secret_name: z.string().max(128).optional(),
    delivery_id_header: z.string().max(100).nullable().optional(),
  })
  .strict()
  .openapi('CreateWebhookBody');

export const enabledBody = z.object({ enabled: z.boolean() }).strict().openapi('EnabledBody');
export const rotateBody = z
  .object({ provider_secret: z.string().max(8192).optional() })
  .strict()
  .openapi('RotateBody');

export const deliveriesQuery = z.object({
  limit: z.coerce.number().int().min(1).max(200).optional(),
  cursor: z.string().min(1).optional(),
});

export const testFilterBody = z
  .object({
    delivery_id: z.string().min(1).optional(),
    /** A sample body to test against instead of a stored delivery (the console checks a filter as it is typed). */
    sample_payload: z.unknown().optional(),
    automation_id: z.string().min(1).optional(),
    filter: z.record(z.unknown()).optional(),
  })
  .strict()
  .refine((b) => !(b.automation_id && b.filter), {
    message: 'give either automation_id or filter, not both',
    path: ['filter'],
  })
  .refine((b) => (b.delivery_id === undefined) !== (b.sample_payload === undefined), {
    message: 'give either delivery_id or sample_payload',
    path: ['delivery_id'],
  })
  .openapi('TestFilterBody');

/** The trigger's shape is checked here; its payload filter and webhook UIDs are validated by the orchestrator. */
const triggerSchema = z.record(z.unknown());

export const createAutomationBody = z
  .object({
    name: z.string().trim().min(1).max(100),
    prompt: z.string().min(1).max(100_000),
    agent_config: agentConfigSchema.optional(),
    enabled: z.boolean().optional(),
    trigger: triggerSchema,
  })
  .strict()
  .openapi('CreateAutomationBody');

export const updateAutomationBody = z
  .object({
    name: z.string().trim().min(1).max(100).optional(),
    prompt: z.string().min(1).max(100_000).optional(),
    agent_config: agentConfigSchema.nullable().optional(),
    enabled: z.boolean().optional(),
    trigger: triggerSchema.optional(),
  })
  .strict()
  .openapi('UpdateAutomationBody');

const value = z.string().min(1).max(8192);
export const createSecretBody = z
  .object({ name: z.string().min(1).max(128), value })
  .strict()
  .openapi('CreateSecretBody');
export const setSecretBody = z.object({ value }).strict().openapi('SetSecretBody');
