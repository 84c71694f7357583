import * as runs from '../schemas/run-schemas';
import { callerOf } from '../middleware/authenticate';
import { toRunItem } from '../mappers/run-item';
import { parseRunListQuery, runListQueryObject } from '../schemas/run-list-query';
import { endpoint, json, type Endpoint } from './endpoint';

/** GET /agent/runs (contract §2.5): filters, sorts and keyset pagination; rules in docs/runs.md. */
export const runListEndpoints: Endpoint[] = [
  endpoint({
    method: 'get',
    path: '/agent/runs',
    tag: 'Runs',
    summary: 'List runs (filters, sorts, cursor pagination; `metadata[<key>]=<value>` pairs also accepted)',
    success: json(runs.runListResponseSchema, 'One page of runs.'),
    query: runListQueryObject,
    readQuery: parseRunListQuery,
    handle: async ({ req, res, query, api, publicUrl }) => {
      const result = await api.call('runs', 'ListRuns', { caller: callerOf(req), ...query }, req.id);
      res.json({
        runs: result.runs.map((run) => toRunItem(run, publicUrl())),
        page_info: {
          has_next_page: result.has_next_page,
          ...(result.next_cursor ? { next_cursor: result.next_cursor } : {}),
        },
      });
    },
  }),
];
