import { AppError } from '@conveyor/errors';
import type { Logger } from '@conveyor/logger';
import type { RunServiceHandlers } from '@conveyor/proto';
import { runToProto } from '../mappers/run-to-proto';
import { requireCaller } from '../require-caller';
import { unary } from '../unary-handler';
import { cancelRun } from '../../runs/cancel-run';
import { createRun, type CreateRunDeps } from '../../runs/create-run';
import { findRunForCaller } from '../../runs/run-access';
import type { RunQueue } from '../../runs/run-queue';
import { isAtCapacity } from '../../runs/run-capacity';
import { runView } from '../../runs/run-view';
import { usageByRun } from '../../runs/run-usage';
import { submitFollowup } from '../../runs/submit-followup';

export interface RunLifecycleDeps extends CreateRunDeps {
  queue: RunQueue;
  logger: Logger;
  workerStaleAfterMs: number;
}

function parseConfig(json: string): Record<string, unknown> {
  if (!json) return {};
  const parsed: unknown = JSON.parse(json);
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new AppError('invalid_request', 'config must be an object');
  return parsed as Record<string, unknown>;
}

/** Write-side RPCs of runs: create, read one, cancel, follow up. */
export function runLifecycleHandlers(
  deps: RunLifecycleDeps,
): Pick<RunServiceHandlers, 'CreateRun' | 'GetRun' | 'CancelRun' | 'SubmitFollowup'> {
  const { db, logger } = deps;
  return {
    CreateRun: unary(logger, 'CreateRun', async (req) => {
      const caller = requireCaller(req.caller);
      const created = await createRun(deps, caller, {
        prompt: req.prompt,
        title: req.title || undefined,
        skill: req.skill || undefined,
        config: parseConfig(req.config_json),
        mode: req.mode || undefined,
        metadata: req.metadata,
        attachments: req.attachments.map((a) => ({
          fileName: a.file_name,
          mimeType: a.mime_type,
          data: Buffer.from(a.data),
        })),
        parentRunId: req.parent_run_id || undefined,
        agentIdentityUid: req.agent_identity_uid || undefined,
        conversationId: req.conversation_id || undefined,
        onBehalfOf: req.on_behalf_of || undefined,
        source: req.source || 'API',
      });
      const atCapacity = await isAtCapacity(
        { db, queue: deps.queue, workerStaleAfterMs: deps.workerStaleAfterMs },
        { id: created.runId, teamId: caller.team_id, workerHost: created.workerHost },
      );
      logger.info({ runId: created.runId, teamId: caller.team_id, atCapacity }, 'run created');
      return { run_id: created.runId, state: created.state, at_capacity: atCapacity };
    }),
    GetRun: unary(logger, 'GetRun', async (req) => {
      const run = await findRunForCaller(db, requireCaller(req.caller), req.run_id);
      const [artifacts, usage] = await Promise.all([
        db.artifact.findMany({ where: { runId: run.id }, orderBy: { createdAt: 'asc' } }),
        usageByRun(db, [run.id]),
      ]);
      return runToProto(runView(run, artifacts, usage.get(run.id)));
    }),
    CancelRun: unary(logger, 'CancelRun', async (req) => {
      const result = await cancelRun(deps, requireCaller(req.caller), req.run_id);
      logger.info({ runId: result.run_id }, 'run cancelled');
      return result;
    }),
    SubmitFollowup: unary(logger, 'SubmitFollowup', async (req) =>
      submitFollowup(deps, requireCaller(req.caller), {
        runId: req.run_id,
        message: req.message,
        mode: req.mode,
      }),
    ),
  };
}
