import * as runs from '../schemas/run-schemas';
import type { Request, Response } from 'express';
import type { OrchestratorApi } from '../orchestrator-api';
import { callerOf } from '../middleware/authenticate';
import { endpoint, json, type Endpoint } from './endpoint';

type Ref = { run_id?: string; conversation_id?: string };

async function conversation(req: Request, res: Response, api: OrchestratorApi, ref: Ref): Promise<void> {
  const result = await api.call('runs', 'GetConversation', { caller: callerOf(req), ...ref }, req.id);
  res.type('application/json').send(result.conversation_json);
}

async function transcript(req: Request, res: Response, api: OrchestratorApi, ref: Ref): Promise<void> {
  const result = await api.call('runs', 'GetTranscript', { caller: callerOf(req), ...ref }, req.id);
  res.set('Cache-Control', 'no-store');
  res.redirect(302, result.url);
}

/**
 * Inspection of a run or conversation (contract §2.7–2.9, §3, §8): timeline, handoff attachments, normalized
 * conversation and a 302 to a signed, time-limited link to the raw transcript. Unknown and other teams' IDs answer the same 404.
 */
export const runInspectionEndpoints: Endpoint[] = [
  endpoint({
    method: 'get',
    path: '/agent/runs/:runId/timeline',
    tag: 'Runs',
    summary: 'Timeline of setup and lifecycle events',
    success: json(runs.timelineResponseSchema, 'Events, oldest first.'),
    handle: async ({ req, res, api }) => {
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
    },
  }),

  // Snapshot files of the latest ended execution, for a harness continuing the run (contract §8).
  endpoint({
    method: 'get',
    path: '/agent/runs/:runId/handoff/attachments',
    tag: 'Runs',
    summary: 'Handoff snapshot attachments of the latest ended execution',
    success: json(runs.handoffAttachmentsResponseSchema, 'Fresh signed download URLs; empty when none.'),
    handle: async ({ req, res, api }) => {
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
    },
  }),

  endpoint({
    method: 'get',
    path: '/agent/runs/:runId/conversation',
    tag: 'Runs',
    summary: 'Normalized conversation of a run',
    success: json(runs.conversationResponseSchema, 'The conversation (docs/runs.md).'),
    handle: ({ req, res, api }) => conversation(req, res, api, { run_id: String(req.params.runId) }),
  }),
  endpoint({
    method: 'get',
    path: '/agent/conversations/:conversationId',
    tag: 'Conversations',
    summary: 'Normalized conversation',
    success: json(runs.conversationResponseSchema, 'The conversation (docs/runs.md).'),
    handle: ({ req, res, api }) =>
      conversation(req, res, api, { conversation_id: String(req.params.conversationId) }),
  }),

  endpoint({
    method: 'get',
    path: '/agent/runs/:runId/transcript',
    tag: 'Runs',
    summary: 'Raw transcript (redirect to a signed, time-limited link)',
    success: {
      status: 302,
      description: 'Location: the signed download URL.',
    },
    handle: ({ req, res, api }) => transcript(req, res, api, { run_id: String(req.params.runId) }),
  }),
  endpoint({
    method: 'get',
    path: '/agent/conversations/:conversationId/transcript',
    tag: 'Conversations',
    summary: 'Raw transcript of a conversation',
    success: { status: 302, description: 'Location: the signed download URL.' },
    handle: ({ req, res, api }) =>
      transcript(req, res, api, { conversation_id: String(req.params.conversationId) }),
  }),
];
