import { Router } from 'express';
import { z } from 'zod';
import type { OrchestratorApi } from '../orchestrator-api';
import { callerOf } from '../middleware/authenticate';
import { toRunItem } from '../mappers/run-item';
import { agentConfigSchema, metadataSchema } from '../schemas/agent-config';
import { parseBody } from '../validation';

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

const modeSchema = z.enum(['normal', 'plan', 'orchestrate']);

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
  );

export const followupBody = z.object({
  message: z.string().max(200_000).optional(),
  mode: modeSchema.optional(),
});

/** Create, read one, cancel and follow up (contract §2.4, §2.6, §2.10, §2.11). */
export function runLifecycleRoutes(api: OrchestratorApi, publicUrl: () => string): Router {
  const router = Router();

  router.post(['/agent/run', '/agent/runs'], async (req, res) => {
    const body = parseBody(createRunBody, req.body);
    const created = await api.call(
      'runs',
      'CreateRun',
      {
        caller: callerOf(req),
        prompt: body.prompt ?? '',
        title: body.title ?? '',
        skill: body.skill ?? '',
        config_json: JSON.stringify(body.config ?? {}),
        mode: body.mode ?? 'normal',
        metadata: body.metadata ?? {},
        attachments: [
          ...(body.attachments ?? []),
          ...(body.images ?? []).map((image, i) => ({
            ...image,
            file_name: `image-${i + 1}.${image.mime_type.split('/')[1]}`,
          })),
        ].map((a) => ({
          file_name: a.file_name,
          mime_type: a.mime_type,
          data: Buffer.from(a.data, 'base64'),
        })),
        conversation_id: body.conversation_id ?? '',
        parent_run_id: body.parent_run_id ?? '',
        agent_identity_uid: body.agent_identity_uid ?? '',
        on_behalf_of: body.on_behalf_of ?? '',
        source: 'API',
      },
      req.id,
    );
    res.json({
      run_id: created.run_id,
      task_id: created.run_id,
      state: created.state,
      at_capacity: created.at_capacity,
    });
  });

  router.get('/agent/runs/:runId', async (req, res) => {
    const run = await api.call('runs', 'GetRun', { caller: callerOf(req), run_id: req.params.runId }, req.id);
    res.json(toRunItem(run, publicUrl()));
  });

  // The SDK sends no body here. The answer is the run ID as plain text: the TypeScript SDK returns a text body as
  // is and the Python SDK reads `str` results as the raw text, so a JSON string would reach Python with its quotes.
  router.post('/agent/runs/:runId/cancel', async (req, res) => {
    const result = await api.call(
      'runs',
      'CancelRun',
      { caller: callerOf(req), run_id: req.params.runId },
      req.id,
    );
    res.type('text/plain').send(result.run_id);
  });

  router.post('/agent/runs/:runId/followups', async (req, res) => {
    const body = parseBody(followupBody, req.body);
    const result = await api.call(
      'runs',
      'SubmitFollowup',
      {
        caller: callerOf(req),
        run_id: req.params.runId,
        message: body.message ?? '',
        mode: body.mode ?? 'normal',
      },
      req.id,
    );
    res.json({
      accepted: true,
      followup_id: result.followup_id,
      routed_to: result.routed_to,
      state: result.state,
    });
  });

  return router;
}
