import * as runs from '../schemas/run-schemas';
import type { z } from 'zod';
import { callerOf } from '../middleware/authenticate';
import { toRunItem } from '../mappers/run-item';
import { createRunBody, followupBody } from '../schemas/run-request-schemas';
import { endpoint, json, type Endpoint, type HandlerContext } from './endpoint';

/** POST /agent/runs and its legacy twin POST /agent/run. */
const createRun = async ({
  req,
  res,
  body,
  api,
}: HandlerContext<string, z.infer<typeof createRunBody>, unknown>) => {
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
};

/** Create, read one, cancel and follow up (contract §2.4, §2.6, §2.10, §2.11). */
export const runLifecycleEndpoints: Endpoint[] = [
  ...(['/agent/runs', '/agent/run'] as const).map((path) =>
    endpoint({
      method: 'post',
      path,
      tag: 'Runs',
      summary:
        path === '/agent/run' ? 'Create a run (legacy path, same as POST /agent/runs)' : 'Create a run',
      success: json(runs.agentRunResponseSchema, 'The run was queued.'),
      body: createRunBody,
      errors: [413, 422],
      handle: createRun,
    }),
  ),

  endpoint({
    method: 'get',
    path: '/agent/runs/:runId',
    tag: 'Runs',
    summary: 'Retrieve a run',
    success: json(runs.runItemSchema, 'The run.'),
    handle: async ({ req, res, api, publicUrl }) => {
      const run = await api.call(
        'runs',
        'GetRun',
        { caller: callerOf(req), run_id: req.params.runId },
        req.id,
      );
      res.json(toRunItem(run, publicUrl()));
    },
  }),

  // The SDK sends no body here. The answer is the run ID as plain text: the TypeScript SDK returns a text body as
  // is and the Python SDK reads `str` results as the raw text, so a JSON string would reach Python with its quotes.
  endpoint({
    method: 'post',
    path: '/agent/runs/:runId/cancel',
    tag: 'Runs',
    summary: 'Cancel a run',
    success: { status: 200, contentType: 'text/plain', description: "The cancelled run's ID as plain text." },
    errors: [409, 422],
    handle: async ({ req, res, api }) => {
      const result = await api.call(
        'runs',
        'CancelRun',
        { caller: callerOf(req), run_id: req.params.runId },
        req.id,
      );
      res.type('text/plain').send(result.run_id);
    },
  }),

  endpoint({
    method: 'post',
    path: '/agent/runs/:runId/followups',
    tag: 'Runs',
    summary: 'Submit a follow-up message',
    success: json(runs.followupResponseSchema, 'Accepted and routed by the run state.'),
    errors: [409, 422],
    body: followupBody,
    handle: async ({ req, res, body, api }) => {
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
    },
  }),
];
