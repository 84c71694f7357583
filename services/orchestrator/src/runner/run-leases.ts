import { sqlPool, type PrismaClient, type RunState } from '@conveyor/db';
import { AppError } from '@conveyor/errors';
import { recordUndeliveredFollowups } from '../runs/undelivered-followups';
import { transitionRun } from '../runs/run-state-machine';
import { runLeaseContext, SecretCipherError, type SecretCipher } from '../secrets/secret-cipher';
import { noLongerHeld } from './report-events';

export interface RunLeaseDeps {
  db: PrismaClient;
  cipher: SecretCipher;
  /** A lease whose execution has not heartbeated for this long may be adopted by another runner (RUN_LEASE_EXPIRY_MS). */
  expiryMs: number;
}

interface Execution {
  run_id: string;
  execution: number;
  runner_id: string;
}

/** Most runs one AdoptRuns call takes over. */
export const MAX_ADOPTED_PER_CALL = 20;

// The holder's own execution, still running: the only one whose record it may write ($1 run, $2 execution, $3 runner).
export const HELD_SQL = `SELECT 1 FROM "Run" WHERE id = $1::uuid AND execution = $2 AND "runnerId" = $3
  AND state IN ('CLAIMED', 'PENDING', 'INPROGRESS') AND "debugExecution" IS NULL`;

/**
 * HELD_SQL inside a write, with the run's row locked: a takeover (ADOPT_SQL) that commits while the write waits for
 * that row is then seen, because PostgreSQL re-reads a locked row that changed during the wait, where a plain read
 * answers from the snapshot taken before it and would release or overwrite the adopter's fresh lease.
 */
const STILL_HELD = `${HELD_SQL} FOR SHARE`;

/** The holder's record, sealed ($4 ciphertext, $5 key, $6 now), written only while HELD_SQL still holds. */
export const SAVE_SQL = `INSERT INTO "RunLease" (id, "runId", execution, "recordCiphertext", "recordKeyId", "updatedAt")
  SELECT gen_random_uuid()::text, $1::uuid, $2, $4, $5, $6 WHERE EXISTS (${STILL_HELD})
  ON CONFLICT ("runId") DO UPDATE SET execution = EXCLUDED.execution,
    "recordCiphertext" = EXCLUDED."recordCiphertext", "recordKeyId" = EXCLUDED."recordKeyId",
    "releasedAt" = NULL, "updatedAt" = EXCLUDED."updatedAt"`;

/** The holder lets go ($4 now): adoptable at once. */
export const RELEASE_SQL = `UPDATE "RunLease" SET "releasedAt" = $4, "updatedAt" = $4
  WHERE "runId" = $1::uuid AND execution = $2 AND EXISTS (${STILL_HELD})`;

/**
 * Takes over, in one statement, the runs whose lease expired (no heartbeat of the holder since $2) or was released,
 * for runner $1: the run's holder becomes $1 and its heartbeat now ($4), so the previous holder's reports are refused
 * (report-events.ts) and the lost-runner sweep sees a live run. Only runs with a lease record for their current
 * execution qualify: that is what a pool runner saved for its started agent, never a self-hosted worker's run (the
 * worker endpoint cannot call SaveRunLease). SKIP LOCKED: two replicas asking at once take different runs.
 */
export const ADOPT_SQL = `WITH taken AS (
    SELECT r.id, r."runnerId" AS previous FROM "Run" r
    JOIN "RunLease" l ON l."runId" = r.id AND l.execution = r.execution
    WHERE r.state IN ('PENDING', 'INPROGRESS') AND r."debugExecution" IS NULL
      AND r."runnerId" IS NOT NULL AND r."runnerId" <> $1
      AND (l."releasedAt" IS NOT NULL OR r."lastHeartbeatAt" < $2)
    ORDER BY r."lastHeartbeatAt" LIMIT $3
    FOR UPDATE OF r SKIP LOCKED
  ), moved AS (
    UPDATE "Run" r SET "runnerId" = $1, "lastHeartbeatAt" = $4 FROM taken WHERE r.id = taken.id
    RETURNING r.id, r.execution, r.state, taken.previous
  ), renewed AS (
    UPDATE "RunLease" l SET "releasedAt" = NULL, "updatedAt" = $4 FROM moved WHERE l."runId" = moved.id
    RETURNING l."runId", l."recordCiphertext", l."recordKeyId"
  )
  SELECT moved.id, moved.execution, moved.state, moved.previous, renewed."recordCiphertext", renewed."recordKeyId"
  FROM moved JOIN renewed ON renewed."runId" = moved.id`;

interface AdoptRow {
  id: string;
  execution: number;
  state: RunState;
  previous: string;
  recordCiphertext: Buffer;
  recordKeyId: string;
}

/** The holder writes (or rewrites) its execution's adoption record, sealed: it holds the run's key and model token. */
export async function saveRunLease(
  deps: RunLeaseDeps,
  req: Execution & { record_json: string },
  now = new Date(),
): Promise<void> {
  if (!req.record_json) throw new AppError('invalid_request', 'record_json is required');
  const held = await sqlPool(deps.db).query(HELD_SQL, [req.run_id, req.execution, req.runner_id]);
  if (held.rowCount === 0) throw noLongerHeld();
  const { ciphertext, keyId } = deps.cipher.encrypt(req.record_json, runLeaseContext(req.run_id));
  // The same condition again in the write: a takeover between the check and here leaves the adopter's record alone.
  await sqlPool(deps.db).query(SAVE_SQL, [req.run_id, req.execution, req.runner_id, ciphertext, keyId, now]);
}

/** A stopping holder hands its execution over: adoptable now rather than once its heartbeats are missed. */
export async function releaseRunLease(deps: RunLeaseDeps, req: Execution, now = new Date()): Promise<void> {
  const { rowCount } = await sqlPool(deps.db).query(RELEASE_SQL, [
    req.run_id,
    req.execution,
    req.runner_id,
    now,
  ]);
  if (rowCount === 0) throw noLongerHeld();
}

/** Takes over the runs whose holder is gone (ADOPT_SQL) and returns their records, unsealed, to the adopter. */
export async function adoptRuns(
  deps: RunLeaseDeps,
  req: { runner_id: string; limit: number },
  now = new Date(),
): Promise<Array<{ run_id: string; execution: number; previous_runner_id: string; record_json: string }>> {
  if (!req.runner_id) throw new AppError('invalid_request', 'runner_id is required');
  const limit = Math.min(Math.max(req.limit, 1), MAX_ADOPTED_PER_CALL);
  const expiredBefore = new Date(now.getTime() - deps.expiryMs);
  const { rows } = await sqlPool(deps.db).query<AdoptRow>(ADOPT_SQL, [
    req.runner_id,
    expiredBefore,
    limit,
    now,
  ]);
  const adopted: Awaited<ReturnType<typeof adoptRuns>> = [];
  for (const row of rows) {
    let record: string;
    try {
      record = deps.cipher.decrypt(row.recordCiphertext, row.recordKeyId, runLeaseContext(row.id));
    } catch (err) {
      if (!(err instanceof SecretCipherError)) throw err;
      // Sealed with a key this deployment no longer has: no runner can ever take this run back. It ends here, naming
      // why, rather than failing the whole call (and every other run in it) on each adopter's every ask.
      await unadoptable(deps, row, req.runner_id, now);
      continue;
    }
    adopted.push({
      run_id: row.id,
      execution: row.execution,
      previous_runner_id: row.previous,
      record_json: record,
    });
  }
  return adopted;
}

/** Ends a run just taken over whose record cannot be unsealed: ERROR, its runner and lease released. */
async function unadoptable(deps: RunLeaseDeps, row: AdoptRow, adopter: string, now: Date): Promise<void> {
  await deps.db.$transaction(async (tx) => {
    const ended = await transitionRun(tx, row, row.state, 'ERROR', {
      now,
      onlyIf: { runnerId: adopter },
      message:
        "The run's runner was lost and its adoption record is sealed with a secrets key this deployment no longer has, so no runner can take the run back",
      errorCode: 'resource_unavailable',
      retryable: true,
      extra: { runnerId: null },
    });
    if (ended) await recordUndeliveredFollowups(tx, row, 'runner_lost', now);
  });
}
