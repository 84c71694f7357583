import { Router } from 'express';
import type { Readiness } from './readiness';

/**
 * `/healthz`: the process is alive. `/readyz`: it can serve traffic (dependencies up, not draining) — for humans and
 * monitoring. `/readyz/local`: only what is local to this process (started, not draining) — for a load balancer's
 * probe, which must not fail on a dependency every replica shares (that would empty the Service at once).
 */
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
  router.get('/readyz/local', (_req, res) => {
    const stopping = readiness.isStopping();
    res.status(stopping ? 503 : 200).json({
      status: stopping ? 'not_ready' : 'ready',
      checks: stopping ? { shutdown: { ok: false, error: 'shutting down' } } : {},
    });
  });
  return router;
}
