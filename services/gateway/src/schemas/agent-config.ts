import { z } from './zod';
import { CLI_KINDS, CLI_NAMES, type CliSecretField } from '@conveyor/harnesses';

const stringMap = z.record(z.string());

/** One optional team-secret name per CLI (`claude_auth_secret_name`, …); Gemini's is Conveyor's (docs/harnesses.md). */
const harnessAuthSecrets = z.object(
  Object.fromEntries(
    Object.values(CLI_KINDS).map((kind) => [kind.secretField, z.string().optional()]),
  ) as Record<CliSecretField, z.ZodOptional<z.ZodString>>,
);

const mcpServer = z
  .object({
    warp_id: z.string().optional(),
    command: z.string().optional(),
    args: z.array(z.string()).optional(),
    env: stringMap.optional(),
    url: z.string().optional(),
    headers: stringMap.optional(),
  })
  .refine((s) => [s.warp_id, s.command, s.url].filter((v) => v !== undefined).length === 1, {
    message: 'exactly one of warp_id, command or url must be set',
  });

/** AmbientAgentConfig (contract §0.11): every key optional; unknown keys are kept for forward compatibility. */
export const agentConfigSchema = z
  .object({
    name: z.string().max(200).optional(),
    environment_id: z.string().optional(),
    model_id: z.string().optional(),
    base_prompt: z.string().optional(),
    skill_spec: z.string().optional(),
    skills: z.array(z.string()).optional(),
    mcp_servers: z.record(mcpServer).optional(),
    worker_host: z.string().optional(),
    runner_id: z.string().optional(),
    idle_timeout_minutes: z.number().int().min(0).max(60).optional(),
    computer_use_enabled: z.boolean().optional(),
    computer_use_model_id: z.string().optional(),
    credential_strategy: z.enum(['CREATOR', 'EXECUTOR']).nullable().optional(),
    harness: z
      .object({
        type: z.enum(['oz', ...CLI_NAMES]).optional(),
        model_id: z.string().optional(),
        reasoning_level: z.string().optional(),
      })
      .optional(),
    harness_auth_secrets: harnessAuthSecrets.optional(),
    inference_providers: z.record(z.unknown()).optional(),
    memory_stores: z
      .array(
        z.object({
          uid: z.string(),
          access: z.enum(['read_write', 'read_only']),
          instructions: z.string().min(1),
        }),
      )
      .optional(),
    session_sharing: z.object({ public_access: z.enum(['VIEWER', 'EDITOR']).optional() }).optional(),
  })
  .passthrough()
  .refine((c) => !(c.skill_spec !== undefined && c.skills !== undefined), {
    message: 'skill_spec and skills are mutually exclusive',
  })
  .openapi('AgentConfig');

const METADATA_KEY = /^[a-zA-Z0-9._-]+$/;

/** Run metadata (contract §0.6): ≤ 20 keys; key 1–64 bytes of [a-zA-Z0-9._-]; value ≤ 256 bytes UTF-8, no NUL. */
export const metadataSchema = z
  .record(z.string())
  .superRefine((map, ctx) => {
    const keys = Object.keys(map);
    if (keys.length > 20)
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        message: `at most 20 keys are allowed (got ${keys.length})`,
      });
    for (const key of keys) {
      if (Buffer.byteLength(key) > 64 || !METADATA_KEY.test(key)) {
        ctx.addIssue({
          code: z.ZodIssueCode.custom,
          path: [key],
          message: 'keys must be 1-64 characters of [a-zA-Z0-9._-]',
        });
      }
      const value = map[key] ?? '';
      if (Buffer.byteLength(value) > 256)
        ctx.addIssue({
          code: z.ZodIssueCode.custom,
          path: [key],
          message: 'values must be at most 256 bytes',
        });
      if (value.includes('\0'))
        ctx.addIssue({ code: z.ZodIssueCode.custom, path: [key], message: 'values must not contain NUL' });
    }
  })
  .openapi('Metadata');

export type AgentConfig = z.infer<typeof agentConfigSchema>;
