import { Router } from 'express';
import type { Registry } from 'prom-client';

/** `GET /metrics` in the Prometheus text format. */
export function metricsRouter(registry: Registry): Router {
  const router = Router();
  router.get('/metrics', async (_req, res, next) => {
    try {
      const body = await registry.metrics();
      res.setHeader('Content-Type', registry.contentType);
      res.end(body);
    } catch (err) {
      next(err);
    }
  });
  return router;
}
