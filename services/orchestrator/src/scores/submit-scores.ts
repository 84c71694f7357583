import { z } from 'zod';
import { newUuid, Prisma, type PrismaClient } from '@conveyor/db';
import { AppError } from '@conveyor/errors';
import type { Caller } from '../auth/caller';
import { findRunForCaller } from '../runs/run-access';

/** Verdicts per request; more is a malformed request rather than a batch of rejections. */
export const MAX_VERDICTS = 100;

/** One verdict (docs/artifacts.md): an evaluation of the judge's assignment, a score in [0, 1], optional pass/fail and reasoning. */
export const verdictSchema = z
  .object({
    evaluation: z.string().min(1).max(128),
    score: z.number().finite().min(0).max(1),
    passed: z.boolean().optional(),
    reasoning: z.string().max(20_000).optional(),
  })
  .strict();

/** What became of one verdict of the request (by its index): accepted, or why not. */
export interface VerdictResult {
  index: number;
  evaluation: string;
  accepted: boolean;
  reason: string;
  detail: string;
}

export type RejectionReason =
  'malformed' | 'unknown_evaluation' | 'duplicate_in_request' | 'already_recorded';

const reject = (
  index: number,
  evaluation: string,
  reason: RejectionReason,
  detail: string,
): VerdictResult => ({ index, evaluation, accepted: false, reason, detail });

/**
 * `POST /agent/runs/{runId}/scores` (contract §2.12). Only the judge run dispatched to score this run may call it,
 * with its run-scoped key; any other key is refused (403 not_authorized), after the usual visibility rule (a run
 * the caller cannot see is a 404). Each verdict is then checked and stored on its own: a rejected verdict never
 * blocks the others, and reporting only some of the evaluations is fine. An evaluation is final once recorded.
 */
export async function submitScores(
  db: PrismaClient,
  caller: Caller,
  runId: string,
  verdictsJson: string[],
  now = new Date(),
): Promise<{ run_id: string; judge_run_id: string; results: VerdictResult[] }> {
  const run = await findRunForCaller(db, caller, runId);
  const judge = caller.run_id ? await db.runJudge.findUnique({ where: { judgeRunId: caller.run_id } }) : null;
  if (!judge || judge.scoredRunId !== run.id) {
    throw new AppError(
      'not_authorized',
      'Only the API key of the judge run dispatched to score this run may submit scores',
    );
  }
  if (verdictsJson.length === 0)
    throw new AppError('invalid_request', 'verdicts must hold at least one verdict');
  if (verdictsJson.length > MAX_VERDICTS)
    throw new AppError('invalid_request', `at most ${MAX_VERDICTS} verdicts per request`);

  const expected = new Set(judge.evaluations);
  const seen = new Set<string>();
  const results: VerdictResult[] = [];
  for (const [index, json] of verdictsJson.entries()) {
    let value: unknown;
    try {
      value = JSON.parse(json);
    } catch {
      results.push(reject(index, '', 'malformed', 'verdict is not JSON'));
      continue;
    }
    const parsed = verdictSchema.safeParse(value);
    const evaluation =
      typeof (value as { evaluation?: unknown } | null)?.evaluation === 'string'
        ? String((value as { evaluation: string }).evaluation)
        : '';
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      results.push(
        reject(
          index,
          evaluation,
          'malformed',
          `${issue?.path.join('.') || 'verdict'}: ${issue?.message ?? 'invalid'}`,
        ),
      );
      continue;
    }
    const verdict = parsed.data;
    if (expected.size > 0 && !expected.has(verdict.evaluation)) {
      results.push(
        reject(
          index,
          verdict.evaluation,
          'unknown_evaluation',
          `expected one of: ${[...expected].join(', ')}`,
        ),
      );
      continue;
    }
    if (seen.has(verdict.evaluation)) {
      results.push(
        reject(
          index,
          verdict.evaluation,
          'duplicate_in_request',
          'this evaluation appears earlier in the request',
        ),
      );
      continue;
    }
    seen.add(verdict.evaluation);
    try {
      await db.runScore.create({
        data: {
          id: newUuid(),
          judgeRunId: judge.judgeRunId,
          scoredRunId: run.id,
          evaluation: verdict.evaluation,
          score: verdict.score,
          passed: verdict.passed ?? null,
          reasoning: verdict.reasoning ?? null,
          createdAt: now,
        },
      });
      results.push({ index, evaluation: verdict.evaluation, accepted: true, reason: '', detail: '' });
    } catch (err) {
      if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002') {
        results.push(
          reject(
            index,
            verdict.evaluation,
            'already_recorded',
            'this judge already reported this evaluation',
          ),
        );
        continue;
      }
      throw err;
    }
  }
  return { run_id: run.id, judge_run_id: judge.judgeRunId, results };
}
