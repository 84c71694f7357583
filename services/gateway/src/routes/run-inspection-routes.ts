import { Router, type Request, type Response } from 'express';
import type { OrchestratorApi } from '../orchestrator-api';
import { callerOf } from '../middleware/authenticate';

/**
 * Inspection of a run or conversation (contract §2.7–2.9, §3, §8): timeline, handoff attachments, normalized
 * conversation and a 302 to a signed, time-limited link to the raw transcript. Unknown and other teams' IDs answer the same 404.
 */
export function runInspectionRoutes(api: OrchestratorApi): Router {
  const router = Router();

  router.get('/agent/runs/:runId/timeline', async (req, res) => {
    const runId = String(req.params.runId);
    const result = await api.call('runs', 'GetTimeline', { caller: callerOf(req), run_id: runId }, req.id);
    res.json({
      run_id: runId,
      events: result.events.map((e) => ({
        id: e.id,
        kind: e.kind,
        created_at: e.created_at,
        execution: e.execution,
        data: JSON.parse(e.data_json || '{}') as unknown,
      })),
    });
  });

  // Snapshot files of the latest ended execution, for a harness continuing the run (contract §8).
  router.get('/agent/runs/:runId/handoff/attachments', async (req, res) => {
    const result = await api.call(
      'runs',
      'ListHandoffAttachments',
      { caller: callerOf(req), run_id: String(req.params.runId) },
      req.id,
    );
    res.set('Cache-Control', 'no-store');
    res.json({
      attachments: result.attachments.map((a) => ({
        attachment_id: a.attachment_id,
        download_url: a.download_url,
        filename: a.filename,
        ...(a.mime_type ? { mime_type: a.mime_type } : {}),
      })),
    });
  });

  const conversation = async (
    req: Request,
    res: Response,
    ref: { run_id?: string; conversation_id?: string },
  ) => {
    const result = await api.call('runs', 'GetConversation', { caller: callerOf(req), ...ref }, req.id);
    res.type('application/json').send(result.conversation_json);
  };
  router.get('/agent/runs/:runId/conversation', (req, res) =>
    conversation(req, res, { run_id: String(req.params.runId) }),
  );
  router.get('/agent/conversations/:conversationId', (req, res) =>
    conversation(req, res, { conversation_id: String(req.params.conversationId) }),
  );

  const transcript = async (
    req: Request,
    res: Response,
    ref: { run_id?: string; conversation_id?: string },
  ) => {
    const result = await api.call('runs', 'GetTranscript', { caller: callerOf(req), ...ref }, req.id);
    res.set('Cache-Control', 'no-store');
    res.redirect(302, result.url);
  };
  router.get('/agent/runs/:runId/transcript', (req, res) =>
    transcript(req, res, { run_id: String(req.params.runId) }),
  );
  router.get('/agent/conversations/:conversationId/transcript', (req, res) =>
    transcript(req, res, { conversation_id: String(req.params.conversationId) }),
  );

  return router;
}
