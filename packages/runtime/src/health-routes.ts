import { Router } from 'express';
import type { Readiness } from './readiness';

/** `/healthz`: the process is alive. `/readyz`: it can serve traffic (dependencies up, not draining). */
export function healthRoutes(readiness: Readiness): Router {
  const router = Router();
  router.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  router.get('/readyz', async (_req, res) => {
    const report = await readiness.report();
    res.status(report.ready ? 200 : 503).json({
      status: report.ready ? 'ready' : 'not_ready',
      checks: report.checks,
      ...(report.loops ? { loops: report.loops } : {}),
    });
  });
  return router;
}
