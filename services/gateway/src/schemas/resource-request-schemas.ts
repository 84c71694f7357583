import { z } from './zod';
import { agentConfigSchema, metadataSchema, type AgentConfig } from './agent-config';
import { modeSchema } from './common-schemas';

/** Request bodies and queries of agent identities, environments, skills and schedules (contract §1, §4; docs/). */

const agentType = z.enum(['FOREMAN', 'TRIAGE', 'SPEC', 'IMPLEMENT', 'REVIEW', 'VERIFY', 'CUSTOM']);
const configShape = agentConfigSchema.innerType().shape;
const secrets = z
  .array(z.object({ name: z.string().min(1).max(128) }).passthrough())
  .max(100)
  .refine((s) => new Set(s.map((x) => x.name)).size === s.length, 'duplicate secret names');
const attachedStores = z
  .array(
    z
      .object({
        uid: z.string().min(1),
        access: z.enum(['read_write', 'read_only']),
        instructions: z.string().min(1),
      })
      .strict(),
  )
  .max(20)
  .refine((s) => new Set(s.map((x) => x.uid)).size === s.length, 'duplicate memory store uids');
// A normalized skill spec: `owner/repo:path` (contract §0.6).
const skillSpec = z
  .string()
  .regex(/^[A-Za-z0-9._-]+\/[A-Za-z0-9._-]+:.+$/, 'must be a skill spec owner/repo:path');

/** Fields shared by CreateAgent and UpdateAgent (contract §6.2); every one may be null (= unset / unchanged). */
const common = {
  description: z.string().max(2000).nullable(),
  prompt: z.string().max(200_000).nullable(),
  agent_type: agentType.nullable(),
  base_model: z.string().max(128).nullable(),
  base_harness: z.string().max(64).nullable(),
  harness: configShape.harness.unwrap().nullable(),
  harness_auth_secrets: configShape.harness_auth_secrets.unwrap().nullable(),
  inference_providers: z.record(z.unknown()).nullable(),
  mcp_servers: configShape.mcp_servers.unwrap().nullable(),
  environment_id: z.string().max(64).nullable(),
  default_runner_uid: z.string().max(200).nullable(),
  worker_host: z.string().max(200).nullable(),
  credential_strategy: z.enum(['CREATOR', 'EXECUTOR']).nullable(),
  on_behalf_of_enabled: z.boolean().nullable(),
  secrets: secrets.nullable(),
  skills: z.array(skillSpec).max(100).nullable(),
};

export const createAgentBody = z
  .object({
    name: z.string().trim().min(1).max(200),
    ...common,
    factory_uid: z.string().max(200).nullable(),
    memory: z
      .object({
        attached_stores: attachedStores.optional(),
        auto_memory: z.object({ enabled: z.boolean().optional() }).strict().optional(),
      })
      .strict()
      .nullable(),
  })
  .partial()
  .required({ name: true })
  .strict()
  .openapi('CreateAgentBody');

export const updateAgentBody = z
  .object({
    name: z.string().trim().min(1).max(200).nullable(),
    ...common,
    memory: z.object({ attached_stores: attachedStores.nullable().optional() }).strict().nullable(),
  })
  .partial()
  .strict()
  .openapi('UpdateAgentBody');

export const createKeyBody = z
  .object({
    name: z.string().trim().max(128).optional(),
    expires_at: z.string().datetime({ offset: true }).optional(),
  })
  .strict()
  .openapi('CreateKeyBody');

// One schema for the environment body, shared with the orchestrator, which checks it again.
export { createEnvironmentBody, updateEnvironmentBody } from '@conveyor/environment-body';
export const listEnvironmentsQuery = z
  .object({ sort_by: z.enum(['last_updated', 'name']).optional() })
  .passthrough();
export const invitationBody = z
  .object({ email: z.string().trim().toLowerCase().email().max(320) })
  .strict()
  .openapi('InvitationBody');

// Query booleans are `true`/`false` on the wire (contract §0.4); an empty value (null) counts as false.
const bool = z
  .enum(['true', 'false', ''])
  .optional()
  .transform((v) => v === 'true');

export const listSkillsQuery = z
  .object({
    repo: z
      .string()
      .regex(/^[A-Za-z0-9._-]+\/[A-Za-z0-9._-]+$/, 'must have the form owner/repo')
      .optional()
      .or(z.literal('').transform(() => undefined)),
    refresh: bool,
    sort_by: z.enum(['name', 'last_run']).optional(),
    include_malformed_skills: bool,
  })
  .passthrough();

/** GET /agent (skills, contract §1.1) and GET /agent/models (§1.4). */

// Cron syntax and time-zone names are checked by the orchestrator with the parser BullMQ fires schedules with.
const cronSchema = z.string().trim().min(1, 'must be a cron expression, e.g. "0 9 * * *"').max(200);
const timezoneSchema = z.string().trim().min(1).max(100);

const hasSkill = (config: AgentConfig | undefined): boolean =>
  Boolean(config?.skill_spec?.trim() || config?.skills?.length);
const promptRule = {
  check: (b: { prompt?: string; agent_config?: AgentConfig }) =>
    (b.prompt?.trim() ?? '') !== '' || hasSkill(b.agent_config),
  message: {
    message: 'Required (unless agent_config.skill_spec or agent_config.skills is given)',
    path: ['prompt'],
  },
};

/** ScheduleCreate (contract §4.2); `timezone` is ours (IANA, default UTC). */
export const createScheduleBody = z
  .object({
    name: z.string().trim().min(1).max(200),
    cron_schedule: cronSchema,
    timezone: timezoneSchema.optional(),
    prompt: z.string().max(200_000).optional(),
    enabled: z.boolean().optional(),
    agent_config: agentConfigSchema.optional(),
    agent_uid: z.string().min(1).optional(),
    metadata: metadataSchema.optional(),
    mode: modeSchema.optional(),
    // Every schedule is team-owned here (like runs); the flag is accepted for compatibility.
    team: z.boolean().optional(),
  })
  .refine(promptRule.check, promptRule.message)
  .openapi('CreateScheduleBody');

/**
 * ScheduleUpdate: every field except agent_config is required. The published SDK sends name, cron_schedule,
 * enabled, prompt and optionally agent_config, so those are the required ones; the other optional fields replace
 * the stored value only when present (docs/schedules.md).
 */
export const updateScheduleBody = z
  .object({
    name: z.string().trim().min(1).max(200),
    cron_schedule: cronSchema,
    enabled: z.boolean(),
    prompt: z.string().max(200_000).optional(),
    timezone: timezoneSchema.optional(),
    agent_config: agentConfigSchema.optional(),
    agent_uid: z.string().optional(),
    metadata: metadataSchema.optional(),
    mode: modeSchema.optional(),
  })
  .refine(promptRule.check, promptRule.message)
  .openapi('UpdateScheduleBody');

/** Scheduled agents (contract §4): create, list, retrieve, update, delete, pause, resume. */
