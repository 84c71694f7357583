import { AppError } from '@conveyor/errors';
import { sqlPool, type Prisma, type PrismaClient, type Run } from '@conveyor/db';
import type { RunnerControl } from './runner-messages';
import { runEventSchema, type RunEvent } from '@conveyor/run-events';
import { artifactRow } from '../artifacts/record-artifact';

/** Locks the run's row for the transaction and reads it, in one statement (Prisma's findUnique cannot lock). */
export async function lockRun(tx: Prisma.TransactionClient, runId: string): Promise<Run | undefined> {
  // Run's columns are its fields' names (no @map), so the raw row is a Run.
  const [run] = await tx.$queryRaw<Run[]>`SELECT * FROM "Run" WHERE "id" = ${runId}::uuid FOR UPDATE`;
  return run;
}

export const noLongerHeld = () => new AppError('conflict', 'This runner no longer holds the run');

/** Only the runner holding the current execution may write; a stale or foreign runner is told to stop. */
export async function lockRunForRunner(
  tx: Prisma.TransactionClient,
  runId: string,
  execution: number,
  runnerId: string,
): Promise<Run> {
  const run = await lockRun(tx, runId);
  if (!run || run.runnerId !== runnerId || run.execution !== execution) throw noLongerHeld();
  return run;
}

export function parseEvents(raw: string[]): RunEvent[] {
  return raw.map((json, i) => {
    let value: unknown;
    try {
      value = JSON.parse(json);
    } catch {
      throw new AppError('invalid_request', `event ${i} is not JSON`);
    }
    const parsed = runEventSchema.safeParse(value);
    if (!parsed.success)
      throw new AppError(
        'invalid_request',
        `event ${i} is invalid: ${parsed.error.issues[0]?.message ?? 'unknown'}`,
      );
    return parsed.data;
  });
}

/**
 * One statement for a runner's batch of events, its heartbeat and its control answer (per executed run this is the
 * orchestrator's most frequent write; a transaction of lock, inserts, update and follow-up read cost 5–8 statements).
 * $1 run, $2 execution, $3 runner, $4 the events (jsonb array, in order), $5 now, $6 the artifact rows of the batch's
 * `artifact` events (artifactRow, each with its event's place `ord` in the batch), $7 whether a write (true:
 * ReportEvents) or a heartbeat (false), $8 the batch's first event's position in the execution (0: not numbered).
 *
 * - `held` locks the run only for the runner holding its current execution: no row, nothing written (the caller
 *   answers conflict or cancellation).
 * - A numbered batch keeps only its events past the execution's `reportedEvents` (`input`): sent again because its
 *   answer was lost, it records nothing twice; the count moves to the batch's last event.
 * - A runner moves its run forward through CLAIMED (1) → PENDING (2) → INPROGRESS (3) only; `steps` gives each
 *   `state_changed` event the state before it (the run's, or the highest target earlier in the batch). A forward one
 *   is recorded as the state machine records it ({kind, from, to}); one to the current state, to another target, or
 *   while the run is CANCELLED or a debug execution is dropped; a backward one (INPROGRESS → PENDING) refuses the
 *   whole batch (`valid` false, nothing written) as run-state-machine.ts does.
 * - Events and recorded state changes go in as one INSERT in the batch's order (the RunEvent triggers write the
 *   outbound events in this same statement); then the run's new state, startedAt, updatedAt and lastHeartbeatAt;
 *   then the follow-ups waiting for this execution are taken (marked delivered) and returned.
 */
const REPORT_SQL = `
WITH held AS (
  SELECT r.id, r.state::text AS state, r."debugExecution" IS NOT DISTINCT FROM r.execution AS debug, r."reportedEvents",
         CASE WHEN r."debugExecution" IS NOT DISTINCT FROM r.execution THEN NULL
              ELSE CASE r.state WHEN 'CLAIMED' THEN 1 WHEN 'PENDING' THEN 2 WHEN 'INPROGRESS' THEN 3 END END AS rank
    FROM "Run" r
   WHERE r.id = $1::uuid AND r."runnerId" = $3 AND r.execution = $2
   FOR UPDATE
), input AS (
  SELECT e.ord, e.data, e.data->>'kind' AS kind,
         CASE WHEN e.data->>'kind' = 'state_changed' THEN
           CASE e.data->>'to' WHEN 'PENDING' THEN 2 WHEN 'INPROGRESS' THEN 3 END END AS rank
    FROM jsonb_array_elements($4::jsonb) WITH ORDINALITY AS e(data, ord)
   WHERE $8 = 0 OR $8 + e.ord - 1 > (SELECT "reportedEvents" FROM held)
), steps AS (
  SELECT i.ord, i.data, i.kind, i.rank,
         greatest(h.rank, max(i.rank) OVER (ORDER BY i.ord ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)) AS prior
    FROM input i CROSS JOIN held h
), outcome AS (
  SELECT h.id, h.debug, h.rank, h."reportedEvents",
         NOT EXISTS (SELECT 1 FROM steps s WHERE h.rank IS NOT NULL AND s.rank < s.prior) AS valid,
         CASE WHEN h.rank IS NOT NULL THEN greatest(h.rank, (SELECT max(rank) FROM input)) END AS target
    FROM held h
), updated AS (
  UPDATE "Run" r
     SET state = CASE WHEN o.target > o.rank
                      THEN (CASE o.target WHEN 2 THEN 'PENDING' ELSE 'INPROGRESS' END)::"RunState"
                      ELSE r.state END,
         "startedAt" = CASE WHEN o.target = 3 AND o.rank < 3 THEN $5 ELSE r."startedAt" END,
         "updatedAt" = CASE WHEN $7 AND NOT o.debug THEN $5 ELSE r."updatedAt" END,
         "lastHeartbeatAt" = $5,
         "reportedEvents" = CASE WHEN $8 > 0 THEN greatest(o."reportedEvents", $8 + jsonb_array_length($4::jsonb) - 1)
                                 ELSE o."reportedEvents" END
    FROM outcome o
   WHERE r.id = o.id AND o.valid
  RETURNING r.state::text AS state
), recorded AS (
  INSERT INTO "RunEvent" ("runId", execution, kind, data, "createdAt")
  SELECT o.id, $2, s.kind,
         CASE WHEN s.kind = 'state_changed'
              THEN jsonb_build_object('kind', 'state_changed',
                                      'from', CASE s.prior WHEN 1 THEN 'CLAIMED' WHEN 2 THEN 'PENDING' ELSE 'INPROGRESS' END,
                                      'to', s.data->>'to')
              ELSE s.data END,
         $5
    FROM steps s CROSS JOIN outcome o
   WHERE o.valid AND (s.kind <> 'state_changed' OR (o.rank IS NOT NULL AND s.rank > s.prior))
   ORDER BY s.ord
), artifacts AS (
  INSERT INTO "Artifact" (id, "runId", type, "isPublic", data, "canonicalUrl", "createdAt")
  SELECT a.id::uuid, o.id, a.type, false, a.data, a."canonicalUrl", $5
    FROM outcome o CROSS JOIN jsonb_to_recordset($6::jsonb) AS a(ord int, id text, type text, data jsonb, "canonicalUrl" text)
   WHERE o.valid AND ($8 = 0 OR $8 + a.ord - 1 > o."reportedEvents")
), taken AS (
  UPDATE "RunFollowup" f SET "deliveredAt" = $5
    FROM outcome o
   WHERE o.valid AND f."runId" = o.id AND f.execution = $2 AND f."deliveredAt" IS NULL
  RETURNING f.id, f.message, f."createdAt"
)
SELECT o.valid, o.debug, (SELECT state FROM updated) AS state,
       (SELECT coalesce(json_agg(json_build_object('followup_id', t.id, 'message', t.message) ORDER BY t."createdAt"), '[]')
          FROM taken t) AS followups
  FROM outcome o`;

interface ReportRow {
  valid: boolean;
  debug: boolean;
  state: string | null;
  followups: RunnerControl['followups'];
}

type Execution = { run_id: string; execution: number; runner_id: string };

/** A batch's events and where they start in the execution's (`first_event`, from 1; 0: not numbered). */
export interface EventBatch {
  events: RunEvent[];
  first_event: number;
}

/** Undefined when this runner does not hold the run's current execution (nothing was written). */
export async function recordBatch(
  db: PrismaClient,
  req: Execution,
  batch: EventBatch,
  write: boolean,
  now: Date,
): Promise<RunnerControl | undefined> {
  const artifacts = batch.events.flatMap((event, i) =>
    event.kind === 'artifact'
      ? [
          {
            ord: i + 1,
            ...artifactRow({ runId: req.run_id, type: event.artifact_type, data: event.data, now }),
          },
        ]
      : [],
  );
  const { rows } = await sqlPool(db).query<ReportRow>(REPORT_SQL, [
    req.run_id,
    req.execution,
    req.runner_id,
    JSON.stringify(batch.events),
    now,
    JSON.stringify(artifacts),
    write,
    batch.first_event,
  ]);
  const row = rows[0];
  if (!row) return undefined;
  if (!row.valid) throw new AppError('conflict', 'A run cannot move back from INPROGRESS to PENDING');
  return { cancel_requested: !row.debug && row.state === 'CANCELLED', followups: row.followups };
}

/**
 * Appends what the harness did. A runner may only move its run forward through setup (PENDING) and start
 * (INPROGRESS); terminal states arrive through CompleteRun. Debug executions never change the run's state.
 */
export async function reportEvents(
  db: PrismaClient,
  req: Execution & { events_json: string[]; first_event?: number },
  now = new Date(),
): Promise<RunnerControl> {
  const batch = { events: parseEvents(req.events_json), first_event: req.first_event ?? 0 };
  const control = await recordBatch(db, req, batch, true, now);
  if (!control) throw noLongerHeld();
  return control;
}

export async function heartbeat(db: PrismaClient, req: Execution, now = new Date()): Promise<RunnerControl> {
  // A runner that lost its run (cancelled and re-executed, or swept as lost) must stop.
  return (
    (await recordBatch(db, req, { events: [], first_event: 0 }, false, now)) ?? {
      cancel_requested: true,
      followups: [],
    }
  );
}
