import { AppError } from '@conveyor/errors';
import { sqlPool, type PrismaClient, type RunState } from '@conveyor/db';
import { TERMINAL_STATES, type RunEvent } from '@conveyor/run-events';
import type { ExecutionOutcome, RunnerControl } from './runner-messages';
import { sqlCanTransition } from '../runs/run-state-sql';
import { SETUP_FAILED_CODE } from '../runs/submit-followup';
import type { HarnessSessions } from './harness-sessions';
import { continueWithUnheardFollowups } from './pending-followups';
import { noLongerHeld, parseEvents, recordBatch } from './report-events';

export type TranscriptSink = (runId: string, execution: number, transcript: Buffer) => Promise<void>;

const isOutcome = (state: string): state is RunState => TERMINAL_STATES.has(state as RunState);

/**
 * The end of an execution as one statement (it was a transaction of lock, update, key revocation and event: 6
 * statements with BEGIN/COMMIT). $1 run, $2 execution, $3 runner, $4 outcome, $5 now, $6 status message, $7 error
 * code, $8 retryable, $9 end of the debug window, $10 the state change's event without its `from`.
 * - `held` locks the run only for the runner holding its current execution (no row: nothing written).
 * - A debug execution leaves the run's state alone and frees its debug slot; a run still running moves to the
 *   outcome (run-state-machine.ts's terminal transition: times, message, code, retryable) with its state change
 *   recorded as a RunEvent (whose trigger writes the outbound event in this same statement); a run that ended
 *   meanwhile (cancelled) keeps its state, message and times: the move must be one TRANSITIONS allows
 *   (run-state-sql.ts). In every case the runner is released: an ended run holds no runner.
 * - Either way the execution's run-scoped keys are revoked now rather than at their expiry, and a run's execution that
 *   ended (not a debug one) loses its adoption record (`forgotten`, as run-state-machine.ts does).
 * - `replayed`: not held because this very completion already committed (its answer was lost: the orchestrator
 *   restarted, or PostgreSQL dropped the connection after the commit): the execution is still the run's current one,
 *   no runner holds it and the run is in the reported outcome. Nothing is written again; the caller answers as the
 *   first time. That includes a run cancelled while this runner held it, whose first completion released it.
 * - `unheard`: the execution has follow-ups its harness never took (pending-followups.ts continues the run with them).
 *   The statement's snapshot is taken before `held` waits for the run's row, so a follow-up committed during that
 *   wait (routed `live_harness`: the run was running) is not among the rows it reads. Its count on the run is: the
 *   follow-up bumped it under the same row lock (submit-followup.ts), and the row `held` locked is the latest version
 *   (READ COMMITTED re-reads a row updated while a locker waited), so a count past the snapshot's says look again,
 *   which continueWithUnheardFollowups does in a transaction of its own. One round trip still; the second read is
 *   the run's row by its key.
 */
export const COMPLETE_SQL = `
WITH held AS (
  SELECT r.id, r.state::text AS state, r.source, r."debugExecution" IS NOT DISTINCT FROM r.execution AS debug,
         r."followupCount"
    FROM "Run" r
   WHERE r.id = $1::uuid AND r."runnerId" = $3 AND r.execution = $2
   FOR UPDATE
), moving AS (
  SELECT h.*, NOT h.debug AND ${sqlCanTransition('h.state', '$4::"RunState"::text')} AS moves FROM held h
), ended AS (
  UPDATE "Run" r
     SET state = CASE WHEN m.moves THEN $4::"RunState" ELSE r.state END,
         "updatedAt" = CASE WHEN m.moves THEN $5 ELSE r."updatedAt" END,
         "endedAt" = CASE WHEN m.moves THEN $5 ELSE r."endedAt" END,
         "statusMessage" = CASE WHEN m.moves THEN $6 ELSE r."statusMessage" END,
         "errorCode" = CASE WHEN m.moves THEN $7 ELSE r."errorCode" END,
         retryable = CASE WHEN m.moves THEN $8 ELSE r.retryable END,
         "sessionDebugUntil" = CASE WHEN m.moves THEN $9 ELSE r."sessionDebugUntil" END,
         "debugExecution" = CASE WHEN m.debug THEN NULL ELSE r."debugExecution" END,
         "runnerId" = NULL
    FROM moving m
   WHERE r.id = m.id
  RETURNING m.id, m.state, m.moves
), recorded AS (
  INSERT INTO "RunEvent" ("runId", execution, kind, data, "createdAt")
  SELECT e.id, $2, 'state_changed', $10::jsonb || jsonb_build_object('from', e.state), $5
    FROM ended e
   WHERE e.moves
), revoked AS (
  UPDATE "ApiKey" k SET "revokedAt" = $5
    FROM held h
   WHERE k."runId" = h.id AND k."revokedAt" IS NULL
), forgotten AS (
  DELETE FROM "RunLease" l USING moving m WHERE l."runId" = m.id AND NOT m.debug
), unheard AS (
  SELECT EXISTS (SELECT 1 FROM "RunFollowup" f
                  WHERE f."runId" = $1::uuid AND f.execution = $2 AND f."deliveredAt" IS NULL)
      OR EXISTS (SELECT 1 FROM held h JOIN "Run" s ON s.id = h.id WHERE s."followupCount" <> h."followupCount")
         AS unheard
), replayed AS (
  SELECT r.source
    FROM "Run" r
   WHERE r.id = $1::uuid AND r.execution = $2 AND r."runnerId" IS NULL
     AND r.state IN ($4::"RunState", 'CANCELLED') AND NOT EXISTS (SELECT 1 FROM held)
)
SELECT h.debug, h.source, false AS replayed, u.unheard FROM held h, unheard u
UNION ALL
SELECT false, p.source, true, u.unheard FROM replayed p, unheard u`;

/**
 * Records the end of an execution, after the events it carries (the runner's last batch: one gRPC call less per
 * run). Idempotent: sent again after a lost answer, the events already recorded are not recorded again and a
 * completion that committed is answered as the first time. A run cancelled meanwhile stays CANCELLED. A setup failure opens the
 * retained-session debug window when the run's environment keeps failed sessions. Returns the run's source too:
 * the caller comments on the GitHub issue of a run a webhook delivery started (once: not for a replay).
 */
export async function completeRun(
  deps: {
    db: PrismaClient;
    saveTranscript: TranscriptSink;
    sessions?: HarnessSessions;
    debugWindowMinutes: number;
  },
  req: ExecutionOutcome,
  now = new Date(),
): Promise<{ control: RunnerControl; source: string; replayed: boolean }> {
  if (!isOutcome(req.state))
    throw new AppError('invalid_request', `state must be one of ${[...TERMINAL_STATES].join(', ')}`);
  // Validated before anything is written; recorded first, in their own statement (REPORT_SQL), as ReportEvents would.
  // Not held: COMPLETE_SQL tells a replay of this completion from a run this runner no longer holds.
  const events = parseEvents(req.events_json ?? []);
  if (events.length > 0)
    await recordBatch(deps.db, req, { events, first_event: req.first_event ?? 0 }, true, now);
  const outcome = req.state;
  const succeeded = outcome === 'SUCCEEDED';
  const setupFailed = req.setup_failed && outcome === 'FAILED';
  const errorCode = succeeded ? null : (setupFailed ? SETUP_FAILED_CODE : req.error_code) || null;
  const message = req.message || (succeeded ? 'Run completed' : `Run ended ${outcome}`);
  const windowMinutes = deps.debugWindowMinutes;
  const event: Omit<Extract<RunEvent, { kind: 'state_changed' }>, 'from'> = {
    kind: 'state_changed',
    to: outcome,
    message,
    ...(errorCode ? { error_code: errorCode } : {}),
  };
  const { rows } = await sqlPool(deps.db).query<{
    debug: boolean;
    source: string;
    replayed: boolean;
    unheard: boolean;
  }>(COMPLETE_SQL, [
    req.run_id,
    req.execution,
    req.runner_id,
    outcome,
    now,
    message,
    errorCode,
    outcome === 'ERROR' ? true : succeeded ? null : false,
    setupFailed && windowMinutes > 0 ? new Date(now.getTime() + windowMinutes * 60_000) : null,
    JSON.stringify(event),
  ]);
  const held = rows[0];
  if (!held) throw noLongerHeld();
  // Also on a replay: the first answer may have been lost before the run went on.
  if (held.unheard && !held.debug) await continueWithUnheardFollowups(deps.db, req, now);
  if (req.transcript.length > 0)
    await deps.saveTranscript(req.run_id, req.execution, Buffer.from(req.transcript));
  // A debug agent's session is its own; the run's next execution resumes the run's.
  if (req.session && req.session.content.length > 0 && !held.debug)
    await deps.sessions?.save(req.run_id, req.session);
  return {
    control: { cancel_requested: false, followups: [] },
    source: held.source,
    replayed: held.replayed,
  };
}
