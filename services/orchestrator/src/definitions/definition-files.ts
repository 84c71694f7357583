import { parseDocument } from 'yaml';
import { z } from 'zod';
import { isSignatureScheme, SIGNATURE_SCHEMES } from '@conveyor/webhook-auth';
import { parseWebhookTrigger, type WebhookTrigger } from '../automations/automation-trigger';
import { AUTH_MODES, DEFINITION_NAME, DEFINITION_NAME_RULE } from '../webhooks/webhook-rules';
import { parseIntegrationDefinition, type IntegrationDefinition } from './integration-definition';
import { zodMessages } from './zod-messages';

/** One problem in one file, reported all together so a whole directory can be fixed in one pass. */
export interface DefinitionError {
  file: string;
  message: string;
}

export interface WebhookDefinition {
  file: string;
  /** The file name without extension: the webhook's name and its identity across applies. */
  name: string;
  uid?: string;
  authMode: (typeof AUTH_MODES)[number];
  signatureScheme?: string;
  secretName: string;
  deliveryIdHeader?: string;
  enabled: boolean;
}

export interface AutomationDefinition {
  file: string;
  name: string;
  id?: string;
  prompt: string;
  agentConfig: Record<string, unknown>;
  enabled: boolean;
  trigger: WebhookTrigger;
}

export interface ParsedDefinitions {
  webhooks: WebhookDefinition[];
  automations: AutomationDefinition[];
  integrations: IntegrationDefinition[];
  errors: DefinitionError[];
}

export const DEFINITION_KINDS = ['webhooks', 'automations', 'integrations'] as const;
type DefinitionKind = (typeof DEFINITION_KINDS)[number];
const FILE = /^(?:.*\/)?(webhooks|automations|integrations)\/([^/]+)\.ya?ml$/;

const webhookSchema = z
  .object({
    name: z.string().optional(),
    uid: z.string().min(1).optional(),
    authMode: z
      .enum(AUTH_MODES, { errorMap: () => ({ message: `must be one of ${AUTH_MODES.join(', ')}` }) })
      .default('token'),
    signatureScheme: z.string().optional(),
    secretName: z
      .string({ required_error: 'is required: the name of an existing team secret' })
      .min(1, 'must not be empty'),
    deliveryIdHeader: z.string().min(1).max(100).optional(),
    enabled: z.boolean().default(true),
    description: z.string().optional(),
  })
  .strict();

const automationSchema = z
  .object({
    name: z.string().optional(),
    id: z.string().min(1).optional(),
    description: z.string().optional(),
    prompt: z.string({ required_error: 'is required' }).min(1, 'must not be empty'),
    agentConfig: z.record(z.unknown()).optional(),
    agent_config: z.record(z.unknown()).optional(),
    enabled: z.boolean().default(true),
    trigger: z.unknown(),
  })
  .strict();

function parseYaml(content: string): { ok: true; value: unknown } | { ok: false; message: string } {
  const doc = parseDocument(content, { prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0)
    return { ok: false, message: `invalid YAML: ${doc.errors.map((e) => e.message).join('; ')}` };
  return { ok: true, value: doc.toJS({ maxAliasCount: 100 }) };
}

/**
 * Parses `webhooks/<name>.yaml`, `automations/<name>.yaml` and `integrations/<name>.yaml` files (paths may carry a leading directory). The file
 * name is the definition's identity: an optional `name` key must repeat it, because renaming is unsupported.
 */
export function parseDefinitionFiles(
  files: ReadonlyArray<{ path: string; content: string }>,
): ParsedDefinitions {
  const result: ParsedDefinitions = { webhooks: [], automations: [], integrations: [], errors: [] };
  const seen = new Map<string, string>();
  for (const { path, content } of files) {
    const file = path.replace(/\\/g, '/').replace(/^\.\//, '');
    const match = FILE.exec(file);
    if (!match) {
      result.errors.push({
        file,
        message: 'expected webhooks/<name>.yaml, automations/<name>.yaml or integrations/<name>.yaml',
      });
      continue;
    }
    const kind = match[1] as DefinitionKind;
    const name = match[2]!;
    const fail = (message: string) => result.errors.push({ file, message });
    if (!DEFINITION_NAME.test(name)) {
      fail(`file name "${name}" must be ${DEFINITION_NAME_RULE}`);
      continue;
    }
    const key = `${kind}/${name}`;
    if (seen.has(key)) {
      fail(`defines ${kind.slice(0, -1)} "${name}" a second time (also ${seen.get(key)})`);
      continue;
    }
    seen.set(key, file);
    const yaml = parseYaml(content);
    if (!yaml.ok) {
      fail(yaml.message);
      continue;
    }
    if (typeof yaml.value !== 'object' || yaml.value === null || Array.isArray(yaml.value)) {
      fail('must be a YAML mapping of keys');
      continue;
    }
    const declaredName = (yaml.value as Record<string, unknown>).name;
    if (declaredName !== undefined && declaredName !== name) {
      fail(
        `name "${String(declaredName)}" differs from the file name "${name}": renaming a ${kind.slice(0, -1)} defined as code is unsupported (the file name is its identity)`,
      );
      continue;
    }

    if (kind === 'webhooks') {
      const parsed = webhookSchema.safeParse(yaml.value);
      if (!parsed.success) {
        for (const message of zodMessages(parsed.error)) fail(message);
        continue;
      }
      const def = parsed.data;
      if (def.authMode === 'signature' && !isSignatureScheme(def.signatureScheme)) {
        fail(`signatureScheme must be one of ${SIGNATURE_SCHEMES.join(', ')} with authMode: signature`);
        continue;
      }
      if (def.authMode !== 'signature' && def.signatureScheme !== undefined) {
        fail('signatureScheme applies to authMode: signature only');
        continue;
      }
      result.webhooks.push({
        file,
        name,
        ...(def.uid !== undefined && { uid: def.uid }),
        authMode: def.authMode,
        ...(def.signatureScheme !== undefined && { signatureScheme: def.signatureScheme }),
        secretName: def.secretName,
        ...(def.deliveryIdHeader !== undefined && { deliveryIdHeader: def.deliveryIdHeader }),
        enabled: def.enabled,
      });
    } else if (kind === 'integrations') {
      const parsed = parseIntegrationDefinition(file, name, yaml.value as Record<string, unknown>);
      if ('errors' in parsed) for (const message of parsed.errors) fail(message);
      else result.integrations.push(parsed.definition);
    } else {
      const parsed = automationSchema.safeParse(yaml.value);
      if (!parsed.success) {
        for (const message of zodMessages(parsed.error)) fail(message);
        continue;
      }
      const def = parsed.data;
      if (def.agentConfig !== undefined && def.agent_config !== undefined) {
        fail('give agentConfig or agent_config, not both');
        continue;
      }
      if (def.trigger === undefined) {
        fail('trigger is required: {provider: webhook, event: received, filter: {webhook_ids: [...]}}');
        continue;
      }
      const trigger = parseWebhookTrigger(def.trigger, 'trigger');
      if (!trigger.ok) {
        for (const e of trigger.errors) fail(`${e.path}: ${e.message}`);
        continue;
      }
      result.automations.push({
        file,
        name,
        ...(def.id !== undefined && { id: def.id }),
        prompt: def.prompt,
        agentConfig: def.agentConfig ?? def.agent_config ?? {},
        enabled: def.enabled,
        trigger: trigger.trigger,
      });
    }
  }
  return result;
}
