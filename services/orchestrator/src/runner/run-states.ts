import { sqlPool, type PrismaClient } from '@conveyor/db';
import { AppError } from '@conveyor/errors';

/** What the orphan reconciler learns of a run (runner.proto `OrphanRunState`). */
export type OrphanRunState =
  | 'ORPHAN_RUN_STATE_ACTIVE'
  | 'ORPHAN_RUN_STATE_ENDED'
  | 'ORPHAN_RUN_STATE_ABANDONED'
  | 'ORPHAN_RUN_STATE_MISSING';

export interface RunStatesDeps {
  db: PrismaClient;
  /** A running run nobody heartbeated for this long (its lease expiry plus the bound) is abandoned. */
  abandonedAfterMs: number;
}

/** Most run IDs one call may ask about: one pass of a namespace's Pods, bounded. */
export const MAX_RUN_STATES = 500;

/** A run ID is a UUID: anything else names no run, and never reaches the query as a cast error. */
const RUN_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

// One statement for the batch ($1 run IDs, $2 the heartbeat before which a running run is abandoned).
export const RUN_STATES_SQL = `SELECT id::text AS id, execution,
    CASE WHEN state IN ('SUCCEEDED', 'FAILED', 'ERROR', 'BLOCKED', 'CANCELLED') THEN 'ENDED'
      WHEN state IN ('PENDING', 'INPROGRESS') AND "lastHeartbeatAt" < $2 THEN 'ABANDONED'
      ELSE 'ACTIVE' END AS state
  FROM "Run" WHERE id = ANY($1::uuid[])`;

/**
 * The states of the runs a runner found objects of, reduced to what deleting them needs: the run's team, content and
 * holder are none of the asking runner's business, whichever runs it names. The current execution lets it collect
 * an earlier execution's Pod of a run that goes on.
 */
export async function runStates(
  deps: RunStatesDeps,
  runIds: readonly string[],
  now = new Date(),
): Promise<Array<{ run_id: string; state: OrphanRunState; execution: number }>> {
  if (runIds.length > MAX_RUN_STATES)
    throw new AppError('invalid_request', `at most ${MAX_RUN_STATES} run IDs per call`);
  const asked = [...new Set(runIds)];
  const valid = asked.filter((id) => RUN_ID.test(id));
  const found = new Map<string, { state: string; execution: number }>();
  if (valid.length > 0) {
    const { rows } = await sqlPool(deps.db).query<{ id: string; state: string; execution: number }>(
      RUN_STATES_SQL,
      [valid, new Date(now.getTime() - deps.abandonedAfterMs)],
    );
    for (const { id, state, execution } of rows) found.set(id.toLowerCase(), { state, execution });
  }
  return asked.map((id) => {
    const run = found.get(id.toLowerCase());
    return {
      run_id: id,
      state: `ORPHAN_RUN_STATE_${run?.state ?? 'MISSING'}` as OrphanRunState,
      execution: run?.execution ?? 0,
    };
  });
}
