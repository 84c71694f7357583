import * as runs from '../schemas/run-schemas';
import { endpoint, json, type Endpoint } from './endpoint';

/**
 * The SDK's public redirect checks (contract §8), sent without credentials: `{conversation_id}` for a shared session
 * whose sandbox finished, `{session_id}` for a conversation with a live shared session, else `{}`. Anonymous callers
 * learn only about publicly shared sessions, and every unknown or invisible ID answers `{}` (docs/api-surface.md).
 */
export const redirectEndpoints: Endpoint[] = [
  endpoint({
    method: 'get',
    path: '/agent/sessions/:sessionUuid/redirect',
    tag: 'Conversations',
    summary: 'Should a shared session redirect to its conversation?',
    success: json(
      runs.sessionRedirectResponseSchema,
      '`conversation_id` once the sandbox finished and conversation data exists, else `{}`.',
    ),
    auth: 'optional',
    handle: async ({ req, res, api }) => {
      const result = await api.call(
        'runs',
        'CheckRedirect',
        { session_id: String(req.params.sessionUuid), caller: req.caller ?? null },
        req.id,
      );
      res.set('Cache-Control', 'no-store');
      res.json(result.conversation_id ? { conversation_id: result.conversation_id } : {});
    },
  }),

  endpoint({
    method: 'get',
    path: '/agent/conversations/:conversationId/redirect',
    tag: 'Conversations',
    summary: 'Should a conversation view redirect to its live shared session?',
    success: json(
      runs.conversationRedirectResponseSchema,
      '`session_id` while the run has a live shared session, else `{}`.',
    ),
    auth: 'optional',
    handle: async ({ req, res, api }) => {
      const result = await api.call(
        'runs',
        'CheckRedirect',
        { conversation_id: String(req.params.conversationId), caller: req.caller ?? null },
        req.id,
      );
      res.set('Cache-Control', 'no-store');
      res.json(result.session_id ? { session_id: result.session_id } : {});
    },
  }),
];
