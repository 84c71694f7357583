import { Router } from 'express';
import type { OrchestratorApi } from '../orchestrator-api';
import { callerOf } from '../middleware/authenticate';
import { toRunItem } from '../mappers/run-item';
import { parseBody } from '../validation';
import { createRunBody, followupBody } from '../schemas/run-request-schemas';

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
