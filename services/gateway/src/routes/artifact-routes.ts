import * as r from '../schemas/resource-schemas';
import { endpoint, json, type Endpoint } from './endpoint';

/**
 * GET /agent/artifacts/{artifactUid} and /download (contract §5). Mounted before API-key enforcement: public
 * artifacts need no key; private ones need the key of someone who can see the run, and otherwise answer the same
 * 404 as a missing artifact. A malformed UID is a 400. Responses carry fresh signed URLs, so nothing is cached.
 */
export const artifactEndpoints: Endpoint[] = [
  endpoint({
    method: 'get',
    path: '/agent/artifacts/:artifactUid',
    tag: 'Artifacts',
    summary: 'Retrieve an artifact',
    success: json(r.artifactResponseSchema, 'The artifact; file-like ones with a fresh signed URL.'),
    auth: 'optional',
    handle: async ({ req, res, api }) => {
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
    },
  }),

  endpoint({
    method: 'get',
    path: '/agent/artifacts/:artifactUid/download',
    tag: 'Artifacts',
    summary: 'Download an artifact (redirect to a signed link)',
    success: { status: 302, description: 'Location: the signed download URL.' },
    auth: 'optional',
    handle: async ({ req, res, api }) => {
      const link = await api.call(
        'artifacts',
        'GetArtifactDownload',
        { caller: req.caller ?? null, artifact_uid: String(req.params.artifactUid) },
        req.id,
      );
      res.set('Cache-Control', 'no-store');
      res.redirect(302, link.url);
    },
  }),
];
