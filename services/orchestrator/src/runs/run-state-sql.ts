import type { RunState } from '@conveyor/db';
import { canTransition, RUNNER_PROGRESS, TRANSITIONS } from './run-state-machine';

/**
 * The state machine's rules as SQL fragments, generated from TRANSITIONS and RUNNER_PROGRESS, for the one-statement
 * hot paths (claim, report, complete) that cannot call transitionRun. Only state names (a closed enum) are ever
 * written into SQL here; values still travel as parameters.
 */

const literal = (state: RunState): string => `'${state}'`;

/** `(from, to) IN (VALUES …)`: true when TRANSITIONS allows the move. Both expressions must be text. */
export const sqlCanTransition = (from: string, to: string): string => {
  const pairs = Object.entries(TRANSITIONS).flatMap(([source, targets]) =>
    targets.map((target) => `(${literal(source as RunState)}, ${literal(target)})`),
  );
  return `(${from}, ${to}) IN (VALUES ${pairs.join(', ')})`;
};

/** One allowed move, checked when the module that needs it loads: a statement cannot encode a move the machine refuses. */
export function sqlTransition(from: RunState, to: RunState) {
  if (!canTransition(from, to)) throw new Error(`The run state machine does not allow ${from} → ${to}`);
  return {
    from: literal(from),
    to: literal(to),
    /** The state change's RunEvent data, as transitionRun records it. */
    event: `'${JSON.stringify({ kind: 'state_changed', from, to })}'`,
  };
}

/** A progress state's rank, from 1. */
export const progressRank = (state: RunState): number => {
  const rank = (RUNNER_PROGRESS as readonly RunState[]).indexOf(state) + 1;
  if (rank === 0) throw new Error(`${state} is not a runner's progress state`);
  return rank;
};

/** A runner's progress rank (1 CLAIMED, 2 PENDING, 3 INPROGRESS): `CASE expr WHEN 'CLAIMED' THEN 1 … END`, NULL otherwise. */
export const sqlProgressRank = (expr: string, states: readonly RunState[] = RUNNER_PROGRESS): string =>
  `CASE ${expr} ${states.map((s) => `WHEN ${literal(s)} THEN ${progressRank(s)}`).join(' ')} END`;

/** The state of a progress rank: the inverse of sqlProgressRank. */
export const sqlProgressState = (expr: string): string =>
  `CASE ${expr} ${RUNNER_PROGRESS.map((s, i) => `WHEN ${i + 1} THEN ${literal(s)}`).join(' ')} END`;

/** The states a runner's `state_changed` event may move its run to (every progress state but the claim's). */
export const REPORTABLE_PROGRESS: readonly RunState[] = RUNNER_PROGRESS.slice(1);
