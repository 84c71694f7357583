import { z } from './zod';
import { ARTIFACT_TYPES, SNAPSHOT_STATES } from '@conveyor/run-events';
import { agentConfigResponseSchema } from './run-schemas';
import {
  jsonObjectSchema,
  modeSchema,
  runStateSchema,
  scopeSchema,
  userProfileSchema,
} from './common-schemas';

/** Response shapes of the catalog, schedules, identities and artifacts (contract §1, §4, §5, §6; docs/). */

const variantSchema = z.object({
  id: z.string(),
  base_prompt: z.string(),
  description: z.string(),
  environments: z.array(z.object({ uid: z.string(), name: z.string() })),
  source: z.object({
    owner: z.string(),
    name: z.string(),
    skill_path: z.string(),
    worker_host: z.string().optional(),
  }),
  error: z.string().optional(),
  last_run_timestamp: z.string().nullable().optional(),
});
export const agentListResponseSchema = z
  .object({
    agents: z.array(z.object({ name: z.string(), variants: z.array(variantSchema) })),
  })
  .openapi('AgentListResponse');

export const modelListResponseSchema = z
  .object({
    models: z.array(
      z.object({
        id: z.string(),
        provider: z.string(),
        display_name: z.string(),
        cost: z.object({
          input_usd_per_million_tokens: z.number(),
          output_usd_per_million_tokens: z.number(),
        }),
        is_default: z.boolean(),
        disabled: z.boolean(),
        disabled_reason: z.string().nullable(),
      }),
    ),
    default_model_id: z.string(),
  })
  .openapi('ModelListResponse');

export const workerListResponseSchema = z
  .object({
    workers: z.array(
      z.object({
        worker_id: z.string(),
        connection_id: z.string(),
        hostname: z.string().optional(),
        version: z.string().optional(),
        capacity: z.number().int(),
        active_runs: z.number().int(),
        connected_at: z.string(),
        last_heartbeat_at: z.string(),
      }),
    ),
  })
  .openapi('WorkerListResponse');

/**
 * CloudEnvironment (contract §1.3) plus `access`, `link_sharing_enabled`, `created_at` (docs/catalog.md) and
 * `snapshot`: the caller's team's snapshot of it (docs/snapshots.md "State in the API").
 */
export const cloudEnvironmentSchema = z
  .object({
    uid: z.string(),
    config: jsonObjectSchema,
    last_updated: z.string(),
    setup_failed: z.boolean(),
    creator: userProfileSchema.optional(),
    last_editor: userProfileSchema.optional(),
    last_task_created: z
      .object({
        id: z.string(),
        title: z.string(),
        state: runStateSchema,
        created_at: z.string(),
        updated_at: z.string(),
        started_at: z.string().nullable().optional(),
      })
      .optional(),
    last_task_run_timestamp: z.string().nullable().optional(),
    scope: scopeSchema.optional(),
    access: z.string(),
    link_sharing_enabled: z.boolean(),
    created_at: z.string(),
    snapshot: z
      .object({
        state: z.enum(SNAPSHOT_STATES),
        snapshot_id: z.string().nullable().optional(),
        updated_at: z.string().nullable().optional(),
        run_id: z.string().nullable().optional(),
      })
      .describe(
        "The caller's team's snapshot of this environment as its runs' runners last reported it: none (none yet, dropped, or snapshots off), building, ready, failed.",
      ),
  })
  .openapi('CloudEnvironment');
export const environmentListResponseSchema = z
  .object({ environments: z.array(cloudEnvironmentSchema) })
  .openapi('EnvironmentListResponse');
export const guestSchema = z
  .object({
    user_id: z.string(),
    display_name: z.string(),
    email: z.string(),
    granted_at: z.string(),
  })
  .openapi('Guest');
/** A pending invitation to an environment (docs/guests.md); `environment_name` only in the invitee's own list. */
export const invitationSchema = z
  .object({
    invitation_id: z.string(),
    environment_id: z.string(),
    environment_name: z.string().optional(),
    email: z.string(),
    status: z.literal('pending'),
    invited_at: z.string(),
  })
  .openapi('Invitation');
export const guestListResponseSchema = z
  .object({
    guests: z.array(guestSchema),
    invitations: z.array(invitationSchema),
  })
  .openapi('GuestListResponse');
export const invitationListResponseSchema = z
  .object({ invitations: z.array(invitationSchema) })
  .openapi('InvitationListResponse');
export const shareLinkResponseSchema = z
  .object({
    environment_id: z.string(),
    token: z.string(),
    url: z.string(),
  })
  .openapi('ShareLinkResponse');

/** ScheduledAgentItem (contract §4.1) plus `timezone`, `mode` and `history.recent_runs` (docs/schedules.md). */
export const scheduledAgentItemSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    cron_schedule: z.string(),
    timezone: z.string(),
    enabled: z.boolean(),
    prompt: z.string(),
    mode: modeSchema,
    created_at: z.string(),
    updated_at: z.string(),
    agent_config: agentConfigResponseSchema.optional(),
    agent_uid: z.string().optional(),
    created_by: userProfileSchema.optional(),
    updated_by: userProfileSchema.optional(),
    history: z
      .object({
        last_ran: z.string().nullable().optional(),
        next_run: z.string().nullable().optional(),
        recent_runs: z
          .array(
            z.object({
              run_id: z.string(),
              state: runStateSchema,
              title: z.string(),
              created_at: z.string(),
              updated_at: z.string(),
            }),
          )
          .optional(),
      })
      .optional(),
    last_spawn_error: z.string().nullable().optional(),
    metadata: z.record(z.string()).optional(),
    scope: scopeSchema.optional(),
  })
  .openapi('ScheduledAgentItem');
export const scheduleListResponseSchema = z
  .object({ schedules: z.array(scheduledAgentItemSchema) })
  .openapi('ScheduleListResponse');
export const successResponseSchema = z.object({ success: z.boolean() }).openapi('SuccessResponse');

const memoryStoreSchema = z.object({
  uid: z.string(),
  access: z.enum(['read_write', 'read_only']),
  instructions: z.string(),
});

/** AgentResponse (contract §6.1). */
export const agentResponseSchema = z
  .object({
    uid: z.string(),
    name: z.string(),
    available: z.boolean(),
    created_at: z.string(),
    updated_at: z.string(),
    default_runner_uid: z.string(),
    skills: z.array(z.string()),
    secrets: z.array(z.object({ name: z.string() }).passthrough()),
    memory: z.object({
      attached_stores: z.array(memoryStoreSchema),
      auto_memory: z.object({ enabled: z.boolean(), store: jsonObjectSchema.optional() }),
    }),
    description: z.string().nullable().optional(),
    prompt: z.string().nullable().optional(),
    agent_type: z
      .enum(['FOREMAN', 'TRIAGE', 'SPEC', 'IMPLEMENT', 'REVIEW', 'VERIFY', 'CUSTOM'])
      .nullable()
      .optional(),
    base_model: z.string().nullable().optional(),
    base_harness: z.string().nullable().optional(),
    harness: agentConfigResponseSchema.shape.harness.nullable(),
    harness_auth_secrets: agentConfigResponseSchema.shape.harness_auth_secrets.nullable(),
    inference_providers: jsonObjectSchema.nullable().optional(),
    mcp_servers: z.record(jsonObjectSchema).nullable().optional(),
    environment_id: z.string().nullable().optional(),
    worker_host: z.string().nullable().optional(),
    credential_strategy: z.enum(['CREATOR', 'EXECUTOR']).nullable().optional(),
    on_behalf_of_enabled: z.boolean().nullable().optional(),
    factory_uid: z.string().nullable().optional(),
  })
  .openapi('AgentResponse');
export const agentIdentityListResponseSchema = z
  .object({ agents: z.array(agentResponseSchema) })
  .openapi('AgentIdentityListResponse');

export const apiKeySchema = z
  .object({
    id: z.string(),
    name: z.string(),
    prefix: z.string(),
    created_at: z.string(),
    last_used_at: z.string().nullable(),
    expires_at: z.string().nullable(),
    revoked_at: z.string().nullable(),
  })
  .openapi('ApiKey');
export const createdApiKeySchema = apiKeySchema.extend({ key: z.string() }).openapi('CreatedApiKey');
export const apiKeyListResponseSchema = z
  .object({ api_keys: z.array(apiKeySchema) })
  .openapi('ApiKeyListResponse');

/** GET /agent/artifacts/{artifactUid} (contract §5.1); `data` per type is documented in docs/artifacts.md. */
export const artifactResponseSchema = z
  .object({
    artifact_type: z.enum(ARTIFACT_TYPES),
    artifact_uid: z.string(),
    created_at: z.string(),
    data: jsonObjectSchema,
  })
  .openapi('ArtifactResponse');
export const reportedArtifactSchema = artifactResponseSchema
  .extend({
    run_id: z.string(),
    is_public: z.boolean(),
  })
  .openapi('ReportedArtifact');
