import { endpoint, type Endpoint } from './endpoint';

/**
 * GET /v1/blobs/{token}: the target of signed download links (artifacts, transcripts). No API key: the token is the
 * credential, and the orchestrator, which signed it, verifies it. Invalid or expired → 403 not_authorized;
 * a valid link to a blob deleted since → 404 resource_not_found (both in the problem+json shape).
 *
 * The bytes are whatever a run uploaded, served from the API's own origin, so they are made inert: always a
 * download (`attachment`, never rendered), the stored type not sniffed into another, and a CSP that sandboxes the
 * document and loads nothing should a browser render it anyway. (Plan content, which the contract inlines, is JSON
 * in `GET /agent/artifacts/{uid}`, not a blob.)
 */
const INERT_DOWNLOAD_HEADERS = {
  'Content-Disposition': 'attachment',
  'X-Content-Type-Options': 'nosniff',
  'Content-Security-Policy': "sandbox; default-src 'none'",
} as const;

export const blobEndpoints: Endpoint[] = [
  endpoint({
    method: 'get',
    path: '/blobs/:token',
    tag: 'Operations',
    summary: 'Download through a signed link (the token is the credential)',
    success: {
      status: 200,
      contentType: 'application/octet-stream',
      description: 'The bytes, with their media type.',
    },
    auth: 'none',
    handle: async ({ req, res, api }) => {
      const blob = await api.call('blobs', 'ReadBlob', { token: String(req.params.token) }, req.id);
      const secondsLeft = Math.max(0, Math.floor((Date.parse(blob.expires_at) - Date.now()) / 1000));
      res.set('Cache-Control', `private, max-age=${secondsLeft}`);
      res.set(INERT_DOWNLOAD_HEADERS);
      res.type(blob.content_type || 'application/octet-stream').send(Buffer.from(blob.data));
    },
  }),
];
