import { z } from './zod';
import { ARTIFACT_TYPES, EXECUTION_LOCATIONS, RUN_SOURCES } from '@conveyor/run-events';
import { agentConfigSchema } from './agent-config';
import { jsonObjectSchema, runStateSchema, scopeSchema, userProfileSchema } from './common-schemas';

/** AmbientAgentConfig as responses carry it: the request rules (e.g. skill_spec xor skills) do not apply. */
export const agentConfigResponseSchema = agentConfigSchema.innerType().openapi('AgentConfigResponse');

export const runArtifactItemSchema = z
  .object({
    artifact_type: z.enum(ARTIFACT_TYPES),
    created_at: z.string(),
    data: jsonObjectSchema,
  })
  .openapi('RunArtifactItem');

/** `request_usage` (contract §2.2): cost and token totals summed from the run's `usage` events. */
export const requestUsageSchema = z
  .object({
    compute_cost: z.number().optional(),
    compute_cost_usd: z.number().optional(),
    inference_cost: z.number().optional(),
    inference_cost_usd: z.number().optional(),
    platform_cost: z.number().optional(),
    platform_cost_usd: z.number().optional(),
    total_tokens: z.number().int().optional(),
    inference_cost_breakdown_usd: z.record(z.number()).optional(),
    usage_by_category: z.record(z.number()).optional(),
  })
  .openapi('RequestUsage');

/** RunItem (contract §2.2). */
export const runItemSchema = z
  .object({
    run_id: z.string(),
    task_id: z.string(),
    title: z.string(),
    prompt: z.string(),
    state: runStateSchema,
    created_at: z.string(),
    updated_at: z.string(),
    started_at: z.string().nullable().optional(),
    agent_config: agentConfigResponseSchema.optional(),
    agent_skill: z
      .object({
        name: z.string().optional(),
        description: z.string().optional(),
        full_path: z.string().optional(),
        bundled_skill_id: z.string().optional(),
      })
      .optional(),
    artifacts: z.array(runArtifactItemSchema).optional(),
    conversation_id: z.string().optional(),
    session_id: z.string().optional(),
    session_link: z.string().optional(),
    creator: userProfileSchema.optional(),
    executor: userProfileSchema.optional(),
    execution_location: z.enum(EXECUTION_LOCATIONS).optional(),
    source: z.enum(RUN_SOURCES).optional(),
    is_run_type_cancellable: z.boolean().optional(),
    is_sandbox_running: z.boolean().optional(),
    metadata: z.record(z.string()).optional(),
    parent_run_id: z.string().optional(),
    schedule: z
      .object({ schedule_id: z.string(), schedule_name: z.string(), cron_schedule: z.string() })
      .optional(),
    scope: scopeSchema.optional(),
    status_message: z
      .object({
        message: z.string(),
        error_code: z.string().optional(),
        retryable: z.boolean().optional(),
        session_debug_until: z.string().optional(),
      })
      .optional(),
    run_time: z.string().optional(),
    trigger_url: z.string().optional(),
    request_usage: requestUsageSchema.optional(),
  })
  .openapi('RunItem');

/** AgentRunResponse (contract §2.4). */
export const agentRunResponseSchema = z
  .object({
    run_id: z.string(),
    task_id: z.string(),
    state: runStateSchema,
    at_capacity: z.boolean().optional(),
  })
  .openapi('AgentRunResponse');

export const runListResponseSchema = z
  .object({
    runs: z.array(runItemSchema),
    page_info: z.object({ has_next_page: z.boolean().optional(), next_cursor: z.string().optional() }),
  })
  .openapi('RunListResponse');

export const followupResponseSchema = z
  .object({
    accepted: z.literal(true),
    followup_id: z.string(),
    routed_to: z.enum(['queued_input', 'live_harness', 'new_execution', 'debug_session']),
    state: runStateSchema,
  })
  .openapi('FollowupResponse');

export const timelineResponseSchema = z
  .object({
    run_id: z.string(),
    events: z.array(
      z.object({
        id: z.string(),
        kind: z.string(),
        created_at: z.string(),
        execution: z.number().int(),
        data: z.unknown(),
      }),
    ),
  })
  .openapi('TimelineResponse');

/** The normalized conversation (docs/runs.md); its messages and steps are documented there. */
export const conversationResponseSchema = z
  .object({ conversation_id: z.string() })
  .passthrough()
  .openapi('ConversationResponse');

/** GET /agent/runs/{run_id}/handoff/attachments (contract §8). */
export const handoffAttachmentsResponseSchema = z
  .object({
    attachments: z.array(
      z.object({
        attachment_id: z.string(),
        download_url: z.string(),
        filename: z.string(),
        mime_type: z.string().optional(),
      }),
    ),
  })
  .openapi('HandoffAttachmentsResponse');

export const uploadedHandoffAttachmentSchema = z
  .object({
    attachment_id: z.string(),
    filename: z.string(),
    mime_type: z.string().optional(),
    execution: z.number().int(),
    size_bytes: z.number().int(),
  })
  .openapi('UploadedHandoffAttachment');

export const sessionRedirectResponseSchema = z
  .object({ conversation_id: z.string().optional() })
  .openapi('SessionRedirectResponse');
export const conversationRedirectResponseSchema = z
  .object({ session_id: z.string().optional() })
  .openapi('ConversationRedirectResponse');

export const scoresResponseSchema = z
  .object({
    run_id: z.string(),
    judge_run_id: z.string(),
    accepted: z.number().int(),
    rejected: z.number().int(),
    results: z.array(
      z.object({
        index: z.number().int(),
        evaluation: z.string().optional(),
        accepted: z.boolean(),
        reason: z.string().optional(),
        detail: z.string().optional(),
      }),
    ),
  })
  .openapi('ScoresResponse');
