import { RUN_STATES, type RunStateName } from '@conveyor/run-events';
import { canTransition, isTerminal } from './run-state-machine';

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
