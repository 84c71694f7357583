import * as runs from '../schemas/run-schemas';
import { callerOf } from '../middleware/authenticate';
import { toRunItem } from '../mappers/run-item';
import { externalReferenceQuery, scoresBody } from '../schemas/run-request-schemas';
import { endpoint, json, type Endpoint } from './endpoint';

/** Judge scores (contract §2.12) and the run behind an external reference (§2.13). */
export const runScoringEndpoints: Endpoint[] = [
  endpoint({
    method: 'post',
    path: '/agent/runs/:runId/scores',
    runScopedKey: true,
    tag: 'Runs',
    summary: "Report a judge run's verdicts on a run",
    success: json(runs.scoresResponseSchema, 'Acceptance per verdict.'),
    body: scoresBody,
    handle: async ({ req, res, body, api }) => {
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
    },
  }),

  endpoint({
    method: 'get',
    path: '/agent/run-by-external-reference',
    tag: 'Runs',
    summary: 'The run that reported an external reference',
    success: json(runs.runItemSchema, 'The run.'),
    query: externalReferenceQuery,
    handle: async ({ req, res, query, api, publicUrl }) => {
      const run = await api.call(
        'artifacts',
        'GetRunByExternalReference',
        { caller: callerOf(req), url: query.url },
        req.id,
      );
      res.json(toRunItem(run, publicUrl()));
    },
  }),
];
