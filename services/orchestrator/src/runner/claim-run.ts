import { AppError } from '@conveyor/errors';
import { newId, sqlPool, type PrismaClient } from '@conveyor/db';
import type { RunAssignment, RunnerExecution } from './runner-messages';
import { generateApiKey } from '../auth/api-key';
import { mintRunApiKey, RUN_API_KEY_TTL_MS } from '../auth/run-api-key';
import { transitionRun } from '../runs/run-state-machine';
import { sqlTransition } from '../runs/run-state-sql';
import { isSelfHostedRun } from '../runs/self-hosted-routing';
import { lockRun } from './report-events';
import { takeRunnerControl } from './runner-control';

const notClaimable = (why: string) => new AppError('conflict', `Run is not claimable: ${why}`);

/**
 * The common claim as one statement (a transaction of lock, update, event, follow-ups, attachments, owner lookup and
 * key insert was 9 statements with BEGIN/COMMIT): QUEUED → CLAIMED by compare-and-set on state and execution, with
 * the state change's RunEvent, the follow-ups waiting for the execution taken, the run key minted for the run's
 * executor (or, for a user's run, its creator: the same owner mintRunApiKey picks; none when neither is in the team)
 * and the attachments read; the execution's count of recorded events starts at 0 (report-events.ts). $1 run, $2 execution, $3 runner, $4 now, $5 key id, $6 key prefix, $7 key hash,
 * $8 key expiry, $9 whether a self-hosted run is refused (the pool's claims), $10 whether the runner acknowledges
 * follow-ups: then those taken stay pending until it does (offered again by REPORT_SQL, carried to the next
 * execution by the lost-runner sweep), else they are marked delivered here. No row: not claimable this way (the
 * caller finds out why, or claims a debug execution, in claimRunLocked).
 */
const CLAIM = sqlTransition('QUEUED', 'CLAIMED');
export const CLAIM_SQL = `
WITH claimed AS (
  UPDATE "Run"
     SET state = ${CLAIM.to}, "updatedAt" = $4, "runnerId" = $3, "lastHeartbeatAt" = $4,
         "claimAttempts" = "claimAttempts" + 1, "reportedEvents" = 0
   WHERE id = $1::uuid AND execution = $2 AND state = ${CLAIM.from}
     AND "debugExecution" IS DISTINCT FROM $2 AND (NOT $9 OR "workerHost" IS NULL)
  RETURNING id, execution, prompt, config, harness, mode, "teamId", "environmentSpec", "skillInstructions",
            "executorType", "executorId", "creatorType", "creatorId"
), recorded AS (
  INSERT INTO "RunEvent" ("runId", execution, kind, data, "createdAt")
  SELECT id, execution, 'state_changed', ${CLAIM.event}, $4
    FROM claimed
), taken AS (
  SELECT f.id, f.message, f."createdAt"
    FROM "RunFollowup" f JOIN claimed c ON f."runId" = c.id AND f.execution = c.execution
   WHERE f."deliveredAt" IS NULL
), delivered AS (
  UPDATE "RunFollowup" f SET "deliveredAt" = $4
    FROM taken t
   WHERE f.id = t.id AND NOT $10
), owner AS (
  SELECT c.id, c."teamId",
         (SELECT a.id FROM "AgentIdentity" a
           WHERE c."executorType" = 'AGENT' AND a.id = c."executorId" AND a."teamId" = c."teamId") AS agent,
         (SELECT u.id FROM "User" u
           WHERE c."executorType" <> 'AGENT' AND u."teamId" = c."teamId"
             AND (u.id = c."executorId" OR (c."creatorType" = 'USER' AND u.id = c."creatorId"))
           ORDER BY u.id = c."executorId" DESC LIMIT 1) AS "user"
    FROM claimed c
), minted AS (
  INSERT INTO "ApiKey" (id, "teamId", "userId", "agentIdentityId", "runId", name, prefix, "secretHash", "createdAt", "expiresAt")
  SELECT $5, o."teamId", o."user", o.agent, o.id, 'run ' || o.id || ' execution ' || $2, $6, $7, $4, $8
    FROM owner o
   WHERE o."user" IS NOT NULL OR o.agent IS NOT NULL
  RETURNING id
)
SELECT c.id, c.execution, c.prompt, c.config, c.harness, c.mode, c."teamId", c."environmentSpec", c."skillInstructions",
       EXISTS (SELECT 1 FROM minted) AS keyed,
       (SELECT coalesce(json_agg(json_build_object('followup_id', t.id, 'message', t.message) ORDER BY t."createdAt"), '[]')
          FROM taken t) AS followups,
       (SELECT coalesce(json_agg(json_build_object('file_name', a."fileName", 'mime_type', a."mimeType",
                                                   'data', encode(a.data, 'base64'))), '[]')
          FROM "RunAttachment" a WHERE a."runId" = c.id) AS attachments
  FROM claimed c`;

interface ClaimRow {
  id: string;
  execution: number;
  prompt: string;
  config: unknown;
  harness: string;
  mode: string;
  teamId: string;
  environmentSpec: unknown;
  skillInstructions: string | null;
  keyed: boolean;
  followups: Array<{ followup_id: string; message: string }>;
  attachments: Array<{ file_name: string; mime_type: string; data: string }>;
}

async function claimQueuedRun(
  db: PrismaClient,
  req: RunnerExecution,
  options: ClaimOptions,
  now: Date,
): Promise<RunAssignment | undefined> {
  const key = generateApiKey();
  const { rows } = await sqlPool(db).query<ClaimRow>(CLAIM_SQL, [
    req.run_id,
    req.execution,
    req.runner_id,
    now,
    newId('key'),
    key.prefix,
    key.secretHash,
    new Date(now.getTime() + RUN_API_KEY_TTL_MS),
    options.refuseSelfHosted ?? false,
    options.acknowledgesFollowups ?? false,
  ]);
  const run = rows[0];
  if (!run) return undefined;
  return {
    run_id: run.id,
    execution: run.execution,
    prompt: run.prompt,
    ...handedOver(run.followups, options),
    config_json: JSON.stringify(run.config ?? {}),
    harness: run.harness,
    mode: run.mode,
    attachments: run.attachments.map((a) => ({
      file_name: a.file_name,
      mime_type: a.mime_type,
      data: Buffer.from(a.data, 'base64'),
    })),
    run_api_key: run.keyed ? key.key : '',
    team_id: run.teamId,
    debug_session: false,
    // Resolved at creation (runs/resolve-run-catalog.ts), so later edits of the environment or skill don't change a queued run.
    environment_json: JSON.stringify(run.environmentSpec ?? {}),
    skill_instructions: run.skillInstructions ?? '',
    completion_takes_events: true,
  };
}

/**
 * `refuseSelfHosted`: the pool's ClaimRun, which never takes a run routed to a self-hosted worker (the
 * WorkerService dispatcher claims those). `acknowledgesFollowups`: the runner sends FollowupAcknowledgement, so the
 * follow-ups the claim hands over stay pending until it acknowledges them (docs/run-lifecycle.md).
 */
export interface ClaimOptions {
  refuseSelfHosted?: boolean;
  acknowledgesFollowups?: boolean;
}

/** The claim's follow-ups as the assignment carries them: with their IDs only for a runner that acknowledges them. */
function handedOver(
  followups: Array<{ followup_id: string; message: string }>,
  options: ClaimOptions,
): Pick<RunAssignment, 'followups' | 'pending_followups'> {
  return {
    followups: followups.map((f) => f.message),
    pending_followups: options.acknowledgesFollowups ? followups : [],
  };
}

/**
 * QUEUED → CLAIMED for exactly one runner (compare-and-set on state and execution), or a debug execution of a
 * failed run (state untouched). Anything else tells the runner to drop the job.
 */
export async function claimRun(
  db: PrismaClient,
  req: RunnerExecution,
  options: ClaimOptions = {},
  now = new Date(),
): Promise<RunAssignment> {
  const claimed = await claimQueuedRun(db, req, options, now);
  if (claimed) return claimed;
  if (options.refuseSelfHosted && (await isSelfHostedRun(db, req.run_id)))
    throw notClaimable('routed to a self-hosted worker');
  return claimRunLocked(db, req, options, now);
}

/** The claims the statement above leaves: a debug execution, and the precise reason a run is not claimable. */
async function claimRunLocked(
  db: PrismaClient,
  req: RunnerExecution,
  options: ClaimOptions,
  now: Date,
): Promise<RunAssignment> {
  return db.$transaction(async (tx) => {
    const run = await lockRun(tx, req.run_id);
    if (!run) throw notClaimable('unknown run');
    if (run.execution !== req.execution) throw notClaimable(`execution ${req.execution} is not current`);
    const debug = run.debugExecution === req.execution;
    if (debug) {
      if (run.runnerId) throw notClaimable('debug session already claimed');
      await tx.run.update({
        where: { id: run.id },
        data: { runnerId: req.runner_id, lastHeartbeatAt: now, reportedEvents: 0 },
      });
    } else {
      if (run.state !== 'QUEUED') throw notClaimable(`state is ${run.state}`);
      const claimed = await transitionRun(tx, run, 'QUEUED', 'CLAIMED', {
        now,
        extra: {
          runnerId: req.runner_id,
          lastHeartbeatAt: now,
          claimAttempts: { increment: 1 },
          reportedEvents: 0,
        },
      });
      if (!claimed) throw notClaimable('claimed concurrently');
    }
    const control = await takeRunnerControl(tx, { ...run, runnerId: req.runner_id }, req.execution, {
      markDelivered: !options.acknowledgesFollowups,
    });
    const attachments = await tx.runAttachment.findMany({ where: { runId: run.id } });
    return {
      run_id: run.id,
      execution: run.execution,
      prompt: run.prompt,
      ...handedOver(control.followups, options),
      config_json: JSON.stringify(run.config ?? {}),
      harness: run.harness,
      mode: run.mode,
      attachments: attachments.map((a) => ({
        file_name: a.fileName,
        mime_type: a.mimeType,
        data: Buffer.from(a.data),
      })),
      run_api_key: await mintRunApiKey(tx, run, now),
      team_id: run.teamId,
      debug_session: debug,
      environment_json: JSON.stringify(run.environmentSpec ?? {}),
      skill_instructions: run.skillInstructions ?? '',
      completion_takes_events: true,
    };
  });
}
