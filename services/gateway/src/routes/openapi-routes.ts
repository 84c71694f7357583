import { Router } from 'express';
import { buildApiDocument } from '../openapi/api-document';

/** GET /v1/openapi.json: the document generated from the gateway's own schemas; public, like any API reference. */
export function openapiRoutes(): Router {
  const router = Router();
  let document: Record<string, unknown> | undefined;
  router.get('/openapi.json', (_req, res) => {
    document ??= buildApiDocument();
    res.json(document);
  });
  return router;
}
