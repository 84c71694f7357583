import { AppError } from '@conveyor/errors';
import type { PrismaClient, RunState } from '@conveyor/db';
import type { ExecutionOutcome, RunnerControl } from './runner-messages';
import { revokeRunApiKeys } from '../auth/run-api-key';
import { isTerminal, transitionRun } from '../runs/run-state-machine';
import { SETUP_FAILED_CODE } from '../runs/submit-followup';
import type { HarnessSessions } from './harness-sessions';
import { lockRunForRunner } from './report-events';

export type TranscriptSink = (runId: string, execution: number, transcript: Buffer) => Promise<void>;

const OUTCOMES: ReadonlySet<string> = new Set(['SUCCEEDED', 'FAILED', 'ERROR', 'BLOCKED', 'CANCELLED']);

/**
 * Records the end of an execution. A run cancelled meanwhile stays CANCELLED. A setup failure opens the
 * retained-session debug window when the run's environment keeps failed sessions.
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
): Promise<RunnerControl> {
  if (!OUTCOMES.has(req.state))
    throw new AppError('invalid_request', `state must be one of ${[...OUTCOMES].join(', ')}`);
  const outcome = req.state as RunState;
  const debug = await deps.db.$transaction(async (tx) => {
    const run = await lockRunForRunner(tx, req.run_id, req.execution, req.runner_id);
    // The execution is over: its run-scoped key stops working now rather than at its expiry (the transition to a
    // terminal state below revokes it itself).
    if (run.debugExecution === req.execution) {
      await revokeRunApiKeys(tx, run.id, now);
      await tx.run.update({ where: { id: run.id }, data: { debugExecution: null, runnerId: null } });
      return true;
    }
    if (isTerminal(run.state)) {
      await revokeRunApiKeys(tx, run.id, now);
      return false;
    }
    const setupFailed = req.setup_failed && outcome === 'FAILED';
    const errorCode = setupFailed ? SETUP_FAILED_CODE : req.error_code || undefined;
    const windowMinutes = deps.debugWindowMinutes;
    await transitionRun(tx, run, run.state, outcome, {
      now,
      message: req.message || (outcome === 'SUCCEEDED' ? 'Run completed' : `Run ended ${outcome}`),
      errorCode: outcome === 'SUCCEEDED' ? undefined : errorCode,
      retryable: outcome === 'ERROR' ? true : outcome === 'SUCCEEDED' ? undefined : false,
      extra: {
        runnerId: null,
        sessionDebugUntil:
          setupFailed && windowMinutes > 0 ? new Date(now.getTime() + windowMinutes * 60_000) : null,
      },
    });
    return false;
  });
  if (req.transcript.length > 0)
    await deps.saveTranscript(req.run_id, req.execution, Buffer.from(req.transcript));
  // A debug agent's session is its own; the run's next execution resumes the run's.
  if (req.session && req.session.content.length > 0 && !debug)
    await deps.sessions?.save(req.run_id, req.session);
  return { cancel_requested: false, followups: [] };
}
