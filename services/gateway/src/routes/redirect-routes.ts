import { Router } from 'express';
import type { OrchestratorApi } from '../orchestrator-api';

/**
 * The SDK's public redirect checks (contract §8), sent without credentials: `{conversation_id}` for a shared session
 * whose sandbox finished, `{session_id}` for a conversation with a live shared session, else `{}`. Anonymous callers
 * learn only about publicly shared sessions, and every unknown or invisible ID answers `{}` (docs/api-surface.md).
 */
export function redirectRoutes(api: OrchestratorApi): Router {
  const router = Router();

  router.get('/agent/sessions/:sessionUuid/redirect', async (req, res) => {
    const result = await api.call(
      'runs',
      'CheckRedirect',
      { session_id: String(req.params.sessionUuid), caller: req.caller ?? null },
      req.id,
    );
    res.set('Cache-Control', 'no-store');
    res.json(result.conversation_id ? { conversation_id: result.conversation_id } : {});
  });

  router.get('/agent/conversations/:conversationId/redirect', async (req, res) => {
    const result = await api.call(
      'runs',
      'CheckRedirect',
      { conversation_id: String(req.params.conversationId), caller: req.caller ?? null },
      req.id,
    );
    res.set('Cache-Control', 'no-store');
    res.json(result.session_id ? { session_id: result.session_id } : {});
  });

  return router;
}
