import { Router } from 'express';
import type { OrchestratorApi } from '../orchestrator-api';

/**
 * GET /agent/artifacts/{artifactUid} and /download (contract §5). Mounted before API-key enforcement: public
 * artifacts need no key; private ones need the key of someone who can see the run, and otherwise answer the same
 * 404 as a missing artifact. A malformed UID is a 400. Responses carry fresh signed URLs, so nothing is cached.
 */
export function artifactRoutes(api: OrchestratorApi): Router {
  const router = Router();

  router.get('/agent/artifacts/:artifactUid', async (req, res) => {
    const view = await api.call(
      'artifacts',
      'GetArtifact',
      { caller: req.caller ?? null, artifact_uid: String(req.params.artifactUid) },
      req.id,
    );
    res.set('Cache-Control', 'no-store');
    res.json({
      artifact_type: view.artifact_type,
      artifact_uid: view.artifact_uid,
      created_at: view.created_at,
      data: JSON.parse(view.data_json || '{}') as unknown,
    });
  });

  router.get('/agent/artifacts/:artifactUid/download', async (req, res) => {
    const link = await api.call(
      'artifacts',
      'GetArtifactDownload',
      { caller: req.caller ?? null, artifact_uid: String(req.params.artifactUid) },
      req.id,
    );
    res.set('Cache-Control', 'no-store');
    res.redirect(302, link.url);
  });

  return router;
}
