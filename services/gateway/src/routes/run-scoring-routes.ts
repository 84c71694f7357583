import { Router } from 'express';
import type { OrchestratorApi } from '../orchestrator-api';
import { callerOf } from '../middleware/authenticate';
import { toRunItem } from '../mappers/run-item';
import { parseBody, parseQuery } from '../validation';
import { externalReferenceQuery, scoresBody } from '../schemas/run-request-schemas';

/** Judge scores (contract §2.12) and the run behind an external reference (§2.13). */
export function runScoringRoutes(api: OrchestratorApi, publicUrl: () => string): Router {
  const router = Router();

  router.post('/agent/runs/:runId/scores', async (req, res) => {
    const body = parseBody(scoresBody, req.body);
    const result = await api.call(
      'artifacts',
      'SubmitScores',
      {
        caller: callerOf(req),
        run_id: String(req.params.runId),
        verdicts_json: body.verdicts.map((v) => JSON.stringify(v) ?? 'null'),
      },
      req.id,
    );
    const results = result.results.map((r) => ({
      index: r.index,
      evaluation: r.evaluation || undefined,
      accepted: r.accepted,
      ...(r.accepted ? {} : { reason: r.reason, detail: r.detail || undefined }),
    }));
    res.json({
      run_id: result.run_id,
      judge_run_id: result.judge_run_id,
      accepted: results.filter((r) => r.accepted).length,
      rejected: results.filter((r) => !r.accepted).length,
      results,
    });
  });

  router.get('/agent/run-by-external-reference', async (req, res) => {
    const query = parseQuery(externalReferenceQuery, req.query);
    const run = await api.call(
      'artifacts',
      'GetRunByExternalReference',
      { caller: callerOf(req), url: query.url },
      req.id,
    );
    res.json(toRunItem(run, publicUrl()));
  });

  return router;
}
