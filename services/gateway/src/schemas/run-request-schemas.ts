import { z } from './zod';
import { ARTIFACT_TYPES } from '@conveyor/run-events';
import { agentConfigSchema, metadataSchema } from './agent-config';
import { modeSchema } from './common-schemas';

/**
 * Request bodies and queries of runs: create and follow up (contract §2.4, §2.11), judge scores and external
 * references (§2.12, §2.13), harness support (docs/artifacts.md).
 */

const IMAGE_TYPES = ['image/jpeg', 'image/png', 'image/gif', 'image/webp'] as const;
const MAX_ATTACHMENT_BYTES = 5 * 1024 * 1024;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

const attachmentSchema = z.object({
  data: z
    .string()
    .min(1)
    .refine((d) => BASE64.test(d), 'must be base64')
    .refine(
      (d) => Math.floor((d.length * 3) / 4) <= MAX_ATTACHMENT_BYTES,
      `must decode to at most ${MAX_ATTACHMENT_BYTES} bytes`,
    ),
  file_name: z.string().min(1).max(255),
  mime_type: z.enum(IMAGE_TYPES),
});

/** Body of POST /agent/run(s) (contract §2.4). */
export const createRunBody = z
  .object({
    prompt: z.string().max(200_000).optional(),
    title: z.string().max(300).optional(),
    skill: z.string().min(1).optional(),
    config: agentConfigSchema.optional(),
    mode: modeSchema.optional(),
    metadata: metadataSchema.optional(),
    attachments: z.array(attachmentSchema).max(5).optional(),
    // The published SDK (1.0.0-alpha.8) sends images without file names.
    images: z
      .array(attachmentSchema.omit({ file_name: true }))
      .max(5)
      .optional(),
    conversation_id: z.string().optional(),
    parent_run_id: z.string().min(1).optional(),
    agent_identity_uid: z.string().min(1).optional(),
    // Every run is owned by the team of the API key (docs/api-surface.md): true is what happens anyway.
    team: z
      .boolean()
      .refine(
        (team) => team,
        'personal runs are not supported; every run is owned by the team of the API key',
      )
      .optional(),
    // Interactive sessions are not offered; follow-ups are the way to talk to a running agent (docs/api-surface.md).
    interactive: z
      .boolean()
      .refine((interactive) => !interactive, 'interactive runs are not supported; send follow-ups instead')
      .optional(),
    on_behalf_of: z.string().trim().min(1).max(320).optional(),
  })
  .refine((b) => (b.attachments?.length ?? 0) + (b.images?.length ?? 0) <= 5, {
    message: 'at most 5 attachments',
    path: ['attachments'],
  })
  .refine(
    (b) =>
      (b.prompt?.trim() ?? '') !== '' ||
      b.skill ||
      b.config?.skill_spec ||
      b.config?.skills?.length ||
      b.conversation_id,
    {
      message: 'prompt is required unless a skill is given',
      path: ['prompt'],
    },
  )
  .openapi('CreateRunBody');

export const followupBody = z
  .object({
    message: z.string().max(200_000).optional(),
    mode: modeSchema.optional(),
  })
  .openapi('FollowupBody');

const MAX_VERDICTS = 100;

/**
 * The envelope only: one or more verdicts. Each verdict's own fields are checked one by one by the orchestrator,
 * so a malformed verdict is a per-verdict rejection instead of failing its neighbours (contract §2.12).
 */
export const scoresBody = z
  .object({ verdicts: z.array(z.unknown()).min(1).max(MAX_VERDICTS) })
  .openapi('ScoresBody');

export const externalReferenceQuery = z.object({
  url: z.string({ required_error: 'url is required' }).min(1, 'url is required'),
});

/**
 * Body of POST /harness-support/report-artifact (docs/artifacts.md): the type, its `data` (checked per type by
 * the orchestrator), file and screenshot bytes as base64, visibility, and for a plan update the plan's UID.
 */
export const reportArtifactBody = z
  .object({
    artifact_type: z.enum(ARTIFACT_TYPES),
    data: z.record(z.unknown()),
    content_base64: z
      .string()
      .min(1)
      .refine((d) => BASE64.test(d), 'must be base64')
      .optional(),
    is_public: z.boolean().optional(),
    artifact_uid: z.string().uuid().optional(),
  })
  .strict()
  .openapi('ReportArtifactBody');

/** Body of POST /harness-support/handoff-attachments: one snapshot file of the current execution (docs/api-surface.md). */
export const handoffAttachmentBody = z
  .object({
    filename: z.string().min(1).max(255),
    mime_type: z.string().min(1).max(255).optional(),
    content_base64: z
      .string()
      .min(1)
      .refine((d) => BASE64.test(d), 'must be base64'),
  })
  .strict()
  .openapi('HandoffAttachmentBody');
