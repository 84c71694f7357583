import { Router } from 'express';
import type { OrchestratorApi } from '../orchestrator-api';
import { callerOf } from '../middleware/authenticate';
import { toRunItem } from '../mappers/run-item';
import { parseRunListQuery } from '../schemas/run-list-query';

/** GET /agent/runs (contract §2.5): filters, sorts and keyset pagination; rules in docs/runs.md. */
export function runListRoutes(api: OrchestratorApi, publicUrl: () => string): Router {
  const router = Router();

  router.get('/agent/runs', async (req, res) => {
    const request = parseRunListQuery(req.query as Record<string, unknown>);
    const result = await api.call('runs', 'ListRuns', { caller: callerOf(req), ...request }, req.id);
    res.json({
      runs: result.runs.map((run) => toRunItem(run, publicUrl())),
      page_info: {
        has_next_page: result.has_next_page,
        ...(result.next_cursor ? { next_cursor: result.next_cursor } : {}),
      },
    });
  });

  return router;
}
