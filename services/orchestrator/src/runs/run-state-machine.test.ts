import { RUN_STATES, type RunStateName } from '@conveyor/run-events';
import { canTransition, isTerminal, RUNNER_PROGRESS, TRANSITIONS } from './run-state-machine';

// The whole table, written out once more on purpose: a change to the state machine must change this test too.
const ALLOWED: Record<RunStateName, RunStateName[]> = {
  QUEUED: ['CLAIMED', 'CANCELLED', 'ERROR'],
  CLAIMED: ['PENDING', 'INPROGRESS', 'QUEUED', 'SUCCEEDED', 'FAILED', 'ERROR', 'BLOCKED', 'CANCELLED'],
  PENDING: ['INPROGRESS', 'QUEUED', 'SUCCEEDED', 'FAILED', 'ERROR', 'BLOCKED', 'CANCELLED'],
  INPROGRESS: ['SUCCEEDED', 'FAILED', 'ERROR', 'BLOCKED', 'CANCELLED'],
  SUCCEEDED: ['QUEUED'],
  FAILED: ['QUEUED'],
  ERROR: ['QUEUED'],
  BLOCKED: ['QUEUED'],
  CANCELLED: ['QUEUED'],
};

const pairs = RUN_STATES.flatMap((from) => RUN_STATES.map((to) => [from, to] as const));

describe('run state machine', () => {
  it.each(pairs.filter(([from, to]) => ALLOWED[from].includes(to)))('allows %s → %s', (from, to) => {
    expect(canTransition(from, to)).toBe(true);
  });

  it.each(pairs.filter(([from, to]) => !ALLOWED[from].includes(to)))('refuses %s → %s', (from, to) => {
    expect(canTransition(from, to)).toBe(false);
  });

  it('never lets a run stay where it is or jump back from INPROGRESS to setup', () => {
    for (const state of RUN_STATES) expect(canTransition(state, state)).toBe(false);
    expect(canTransition('INPROGRESS', 'PENDING')).toBe(false);
    expect(canTransition('INPROGRESS', 'QUEUED')).toBe(false);
  });

  it('leaves an ended run only through a new execution (QUEUED)', () => {
    for (const state of RUN_STATES.filter(isTerminal)) {
      expect(RUN_STATES.filter((to) => canTransition(state, to))).toEqual(['QUEUED']);
    }
    expect(RUN_STATES.filter(isTerminal)).toEqual(['SUCCEEDED', 'FAILED', 'ERROR', 'BLOCKED', 'CANCELLED']);
  });
});

describe("the runner's progress", () => {
  it('moves only forward, each later state reachable from every earlier one, as TRANSITIONS allows', () => {
    RUNNER_PROGRESS.forEach((from, i) =>
      RUNNER_PROGRESS.forEach((to, j) =>
        expect([from, to, canTransition(from, to)]).toEqual([from, to, j > i]),
      ),
    );
  });

  it('starts where a claim lands, and every terminal state is reachable from each of its states', () => {
    expect(TRANSITIONS.QUEUED).toContain(RUNNER_PROGRESS[0]);
    for (const state of RUNNER_PROGRESS)
      for (const end of RUN_STATES.filter(isTerminal))
        expect([state, end, canTransition(state, end)]).toEqual([state, end, true]);
  });
});
