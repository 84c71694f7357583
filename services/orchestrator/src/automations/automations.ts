import { AppError } from '@conveyor/errors';
import { newId, type Automation, type Prisma, type PrismaClient } from '@conveyor/db';
import type { Caller } from '../auth/caller';
import { loadFactory } from '../factories/factories';
import { requireFactoryManager } from '../factories/permissions';
import { DISPLAY_NAME, DISPLAY_NAME_RULE } from '../factories/display-name';
import { describeErrors, parseWebhookTrigger, type WebhookTrigger } from './automation-trigger';

export const MAX_PROMPT_LENGTH = 100_000;

type Db = PrismaClient | Prisma.TransactionClient;

export interface AutomationView {
  row: Automation;
  managedBy: 'api' | 'definition';
}

export interface AutomationFields {
  name: string;
  prompt: string;
  agentConfig: Record<string, unknown>;
  enabled: boolean;
  trigger: WebhookTrigger;
}

export const viewAutomation = (row: Automation): AutomationView => ({
  row,
  managedBy: row.definitionName ? 'definition' : 'api',
});

export function validateAutomationName(name: string): string {
  const trimmed = name.trim();
  if (!DISPLAY_NAME.test(trimmed)) throw new AppError('invalid_request', `name must be ${DISPLAY_NAME_RULE}`);
  return trimmed;
}

export function validatePrompt(prompt: string): string {
  if (!prompt.trim()) throw new AppError('invalid_request', 'prompt is required');
  if (prompt.length > MAX_PROMPT_LENGTH)
    throw new AppError('invalid_request', `prompt must be at most ${MAX_PROMPT_LENGTH} characters`);
  return prompt;
}

/** The agent config is an AmbientAgentConfig object; it is checked the same way as a run's when a run starts. */
export function validateAgentConfig(value: unknown, field = 'agent_config'): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value))
    throw new AppError('invalid_request', `${field} must be an object (AmbientAgentConfig)`);
  const config = value as Record<string, unknown>;
  if (config.skill_spec !== undefined && config.skills !== undefined)
    throw new AppError('invalid_request', `${field}: skill_spec and skills are mutually exclusive`);
  for (const key of [
    'name',
    'environment_id',
    'model_id',
    'base_prompt',
    'skill_spec',
    'worker_host',
  ] as const) {
    if (config[key] !== undefined && typeof config[key] !== 'string')
      throw new AppError('invalid_request', `${field}.${key} must be a string`);
  }
  return config;
}

export function validateTrigger(value: unknown, path = 'trigger'): WebhookTrigger {
  const parsed = parseWebhookTrigger(value, path);
  if (!parsed.ok)
    throw new AppError('invalid_request', describeErrors(parsed.errors), {
      details: { errors: parsed.errors },
    });
  return parsed.trigger;
}

/** A trigger may only select webhooks of the automation's own factory; returns the UIDs that are not. */
export async function unknownWebhookIds(
  db: Db,
  factoryId: string,
  ids: readonly string[],
): Promise<string[]> {
  const found = await db.webhook.findMany({
    where: { factoryId, id: { in: [...ids] } },
    select: { id: true },
  });
  const known = new Set(found.map((w) => w.id));
  return ids.filter((id) => !known.has(id));
}

async function assertWebhooksInFactory(db: Db, factoryId: string, trigger: WebhookTrigger): Promise<void> {
  const unknown = await unknownWebhookIds(db, factoryId, trigger.filter.webhook_ids);
  if (unknown.length > 0)
    throw new AppError(
      'invalid_request',
      `trigger.filter.webhook_ids: ${unknown.join(', ')} is not a webhook of this factory`,
    );
}

export async function loadAutomation(
  db: Db,
  caller: Caller,
  factoryId: string,
  automationId: string,
): Promise<Automation> {
  const row =
    automationId && factoryId
      ? await db.automation.findFirst({ where: { id: automationId, factoryId, teamId: caller.team_id } })
      : null;
  if (!row) throw new AppError('resource_not_found', 'Automation not found');
  return row;
}

export async function createAutomation(
  db: PrismaClient,
  caller: Caller,
  factoryId: string,
  input: { name: string; prompt: string; agentConfig?: unknown; enabled?: boolean; trigger: unknown },
): Promise<AutomationView> {
  requireFactoryManager(caller, 'Creating an automation');
  const name = validateAutomationName(input.name);
  const prompt = validatePrompt(input.prompt);
  const agentConfig = validateAgentConfig(input.agentConfig);
  const trigger = validateTrigger(input.trigger);
  await loadFactory(db, caller, factoryId);
  await assertWebhooksInFactory(db, factoryId, trigger);
  if (
    await db.automation.findUnique({ where: { factoryId_name: { factoryId, name } }, select: { id: true } })
  ) {
    throw new AppError('conflict', `An automation named "${name}" already exists in this factory`);
  }
  const row = await db.automation.create({
    data: {
      id: newId('auto'),
      teamId: caller.team_id,
      factoryId,
      name,
      prompt,
      agentConfig: agentConfig as Prisma.InputJsonValue,
      enabled: input.enabled ?? true,
      trigger: trigger as unknown as Prisma.InputJsonValue,
      webhookIds: trigger.filter.webhook_ids,
      createdById: caller.principal_id,
    },
  });
  return viewAutomation(row);
}

export async function listAutomations(
  db: PrismaClient,
  caller: Caller,
  factoryId: string,
): Promise<AutomationView[]> {
  await loadFactory(db, caller, factoryId);
  const rows = await db.automation.findMany({
    where: { factoryId, teamId: caller.team_id },
    orderBy: [{ name: 'asc' }],
  });
  return rows.map(viewAutomation);
}

export async function getAutomation(
  db: PrismaClient,
  caller: Caller,
  factoryId: string,
  automationId: string,
): Promise<AutomationView> {
  return viewAutomation(await loadAutomation(db, caller, factoryId, automationId));
}

/** Partial update; an automation defined as code keeps its name (its file name): renaming it is refused. */
export async function updateAutomation(
  db: PrismaClient,
  caller: Caller,
  factoryId: string,
  automationId: string,
  patch: { name?: string; prompt?: string; agentConfig?: unknown; enabled?: boolean; trigger?: unknown },
): Promise<AutomationView> {
  requireFactoryManager(caller, 'Editing an automation');
  const current = await loadAutomation(db, caller, factoryId, automationId);
  const data: Prisma.AutomationUpdateInput = {};
  if (patch.name !== undefined) {
    const name = validateAutomationName(patch.name);
    if (name !== current.name) {
      if (current.definitionName)
        throw new AppError(
          'invalid_request',
          `Automation "${current.name}" is defined as code (automations/${current.definitionName}.yaml); renaming it is unsupported`,
        );
      if (
        await db.automation.findUnique({
          where: { factoryId_name: { factoryId, name } },
          select: { id: true },
        })
      ) {
        throw new AppError('conflict', `An automation named "${name}" already exists in this factory`);
      }
      data.name = name;
    }
  }
  if (patch.prompt !== undefined) data.prompt = validatePrompt(patch.prompt);
  if (patch.agentConfig !== undefined)
    data.agentConfig = validateAgentConfig(patch.agentConfig) as Prisma.InputJsonValue;
  if (patch.enabled !== undefined) data.enabled = patch.enabled;
  if (patch.trigger !== undefined) {
    const trigger = validateTrigger(patch.trigger);
    await assertWebhooksInFactory(db, factoryId, trigger);
    data.trigger = trigger as unknown as Prisma.InputJsonValue;
    data.webhookIds = trigger.filter.webhook_ids;
  }
  return viewAutomation(await db.automation.update({ where: { id: current.id }, data }));
}

export async function deleteAutomation(
  db: PrismaClient,
  caller: Caller,
  factoryId: string,
  automationId: string,
): Promise<void> {
  requireFactoryManager(caller, 'Deleting an automation');
  const current = await loadAutomation(db, caller, factoryId, automationId);
  await db.automation.delete({ where: { id: current.id } });
}
