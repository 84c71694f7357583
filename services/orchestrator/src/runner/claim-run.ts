import { AppError } from '@conveyor/errors';
import type { PrismaClient } from '@conveyor/db';
import type { RunAssignment, RunnerExecution } from './runner-messages';
import { mintRunApiKey } from '../auth/run-api-key';
import { transitionRun } from '../runs/run-state-machine';
import { lockRun } from './report-events';
import { takeRunnerControl } from './runner-control';

const notClaimable = (why: string) => new AppError('conflict', `Run is not claimable: ${why}`);

/**
 * QUEUED → CLAIMED for exactly one runner (compare-and-set on state and execution), or a debug execution of a
 * failed run (state untouched). Anything else tells the runner to drop the job.
 */
export async function claimRun(
  db: PrismaClient,
  req: RunnerExecution,
  now = new Date(),
): Promise<RunAssignment> {
  return db.$transaction(async (tx) => {
    const run = await lockRun(tx, req.run_id);
    if (!run) throw notClaimable('unknown run');
    if (run.execution !== req.execution) throw notClaimable(`execution ${req.execution} is not current`);
    const debug = run.debugExecution === req.execution;
    if (debug) {
      if (run.runnerId) throw notClaimable('debug session already claimed');
      await tx.run.update({ where: { id: run.id }, data: { runnerId: req.runner_id, lastHeartbeatAt: now } });
    } else {
      if (run.state !== 'QUEUED') throw notClaimable(`state is ${run.state}`);
      const claimed = await transitionRun(tx, run, 'QUEUED', 'CLAIMED', {
        now,
        extra: { runnerId: req.runner_id, lastHeartbeatAt: now, claimAttempts: { increment: 1 } },
      });
      if (!claimed) throw notClaimable('claimed concurrently');
    }
    const control = await takeRunnerControl(tx, { ...run, runnerId: req.runner_id }, req.execution);
    const attachments = await tx.runAttachment.findMany({ where: { runId: run.id } });
    return {
      run_id: run.id,
      execution: run.execution,
      prompt: run.prompt,
      followups: control.followups?.map((f) => f.message ?? '') ?? [],
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
      // Resolved at creation (runs/resolve-run-catalog.ts), so later edits of the environment or skill don't change a queued run.
      environment_json: JSON.stringify(run.environmentSpec ?? {}),
      skill_instructions: run.skillInstructions ?? '',
    };
  });
}
