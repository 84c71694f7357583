import type { Prisma } from '@conveyor/db';
import { AppError } from '@conveyor/errors';
import { createRun, type CreateRunDeps } from '../runs/create-run';

export interface JudgeDispatch {
  /** The run to score. */
  scoredRunId: string;
  /** Evaluations the judge is expected to report (a subset is valid); empty = any evaluation name. */
  evaluations: string[];
  prompt?: string;
  /** AmbientAgentConfig of the judge run (e.g. its harness). */
  config?: Record<string, unknown>;
}

const defaultPrompt = (runId: string, evaluations: string[]): string =>
  [
    `Score run ${runId}.`,
    evaluations.length
      ? `Evaluations: ${evaluations.join(', ')}.`
      : 'Report the evaluations you judge relevant.',
    `Submit verdicts with POST {api_base_url}/agent/runs/${runId}/scores using this run's API key.`,
  ].join('\n');

/**
 * Starts a judge run (source RUN_SCORER) for a run and records what it scores: `RunJudge` says which run and
 * evaluations the judge's run-scoped key may submit verdicts for. The judge runs as the scored run's creator,
 * in the same team. The assignment commits in the run's own transaction, so no judge ever runs unassigned.
 */
export async function dispatchJudgeRun(
  deps: CreateRunDeps,
  dispatch: JudgeDispatch,
): Promise<{ judgeRunId: string; scoredRunId: string; evaluations: string[] }> {
  const scored = await deps.db.run.findUnique({ where: { id: dispatch.scoredRunId } });
  if (!scored) throw new AppError('resource_not_found', 'Run not found');
  const evaluations = [...new Set(dispatch.evaluations.map((e) => e.trim()).filter(Boolean))];
  const created = await createRun(
    deps,
    {
      team_id: scored.teamId,
      principal_type: scored.creatorType,
      principal_id: scored.creatorId,
      role: 'MEMBER',
      api_key_id: '',
      run_id: '',
      display_name: '',
      email: '',
    },
    {
      prompt: dispatch.prompt ?? defaultPrompt(scored.id, evaluations),
      title: `Score run ${scored.title}`.slice(0, 300),
      config: dispatch.config,
      source: 'RUN_SCORER',
      metadata: { scored_run_id: scored.id },
    },
    async (tx, judgeRunId) => {
      await tx.runJudge.create({
        data: {
          judgeRunId,
          scoredRunId: scored.id,
          evaluations,
        } satisfies Prisma.RunJudgeUncheckedCreateInput,
      });
    },
  );
  return { judgeRunId: created.runId, scoredRunId: scored.id, evaluations };
}
