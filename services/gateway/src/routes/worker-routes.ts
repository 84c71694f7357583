import * as r from '../schemas/resource-schemas';
import { callerOf } from '../middleware/authenticate';
import { endpoint, json, type Endpoint } from './endpoint';

/**
 * GET /agent/connected-self-hosted-workers (contract §1.2): the caller's team's workers with a live connection and
 * a heartbeat fresher than the orchestrator's WORKER_STALE_AFTER_MS (docs/workers.md).
 */
export const workerEndpoints: Endpoint[] = [
  endpoint({
    method: 'get',
    path: '/agent/connected-self-hosted-workers',
    tag: 'Catalog',
    summary: "The team's connected self-hosted workers",
    success: json(r.workerListResponseSchema, 'Connected workers.'),
    handle: async ({ req, res, api }) => {
      const result = await api.call('workers', 'ListConnectedWorkers', { caller: callerOf(req) }, req.id);
      res.json({
        workers: result.workers.map((w) => ({
          worker_id: w.worker_id,
          connection_id: w.connection_id,
          hostname: w.hostname || undefined,
          version: w.version || undefined,
          capacity: w.capacity,
          active_runs: w.active_runs,
          connected_at: w.connected_at,
          last_heartbeat_at: w.last_heartbeat_at,
        })),
      });
    },
  }),
];
