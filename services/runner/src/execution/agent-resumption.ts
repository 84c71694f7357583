import type { Completion, ExecutionContext } from './execution-context';
import type { CheckpointRecord, RunCheckpoint } from './turn-checkpoints';

/** What the resumed agent is told first: where it is, and that its last step may not have finished. */
export const resumeMessage = (cause: string, turn: number): string =>
  `The run's environment was lost while you were working (${cause}). It was restored as it was after your turn ` +
  `${turn}: a step you had started since may not have finished or may have left partial changes. Check the ` +
  'workspace and continue the task.';

const lostCompletion = (message: string): Completion => ({
  state: 'ERROR',
  message,
  errorCode: 'resource_unavailable',
});

/**
 * The run's agent was lost with its sandbox after its harness started (docs/run-lifecycle.md "Lost agents"): the run
 * goes on from its last checkpoint, counted against `maxResumptions`; where there is none, or the cap is reached,
 * it ends ERROR naming why — never started again from scratch. Either way the timeline says so (`agent_lost`).
 */
export async function resumptionAfterLoss(
  ctx: Pick<ExecutionContext, 'reporter' | 'log'>,
  checkpoint: RunCheckpoint,
  cause: string,
  maxResumptions: number,
): Promise<{ resume: CheckpointRecord } | { completion: Completion }> {
  let record: CheckpointRecord | undefined;
  try {
    record = await checkpoint.latest();
  } catch (err) {
    const why = (err as Error).message;
    ctx.log.error({ cause, why }, 'lost agent not resumed: unreadable checkpoint');
    return { completion: lostCompletion(`The run's agent was lost (${cause}) and could not resume: ${why}`) };
  }
  const turn = record?.turn ?? 0;
  const resumption = (record?.resumptions ?? 0) + 1;
  const report = (resumed: boolean, text: string) =>
    ctx.reporter.emit({ kind: 'agent_lost', cause, turn, resumption, resumed, text });
  if (!record) {
    const text = `The run's agent was lost (${cause}) before it completed a turn; with no checkpoint to go on from, it was not started again`;
    report(false, text);
    return { completion: lostCompletion(text) };
  }
  if (record.resumptions >= maxResumptions) {
    const text = `Not resumed after ${cause} at turn ${turn}: the run was already resumed ${record.resumptions} time(s), the most RUN_MAX_RESUMPTIONS allows`;
    report(false, text);
    return { completion: lostCompletion(text) };
  }
  await checkpoint.resumed(record);
  report(true, `Resumed after ${cause} at turn ${turn}`);
  ctx.log.warn({ cause, turn, resumption }, 'lost agent resumed from its last turn');
  return { resume: { ...record, resumptions: resumption } };
}
