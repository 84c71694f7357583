import { sqlProgressRank, sqlTransition } from './run-state-sql';

describe('the state machine as SQL fragments', () => {
  it('refuses to encode a move the state machine does not allow', () => {
    expect(() => sqlTransition('INPROGRESS', 'PENDING')).toThrow('does not allow INPROGRESS → PENDING');
    expect(sqlTransition('QUEUED', 'CLAIMED')).toEqual({
      from: "'QUEUED'",
      to: "'CLAIMED'",
      event: `'{"kind":"state_changed","from":"QUEUED","to":"CLAIMED"}'`,
    });
  });

  it("ranks only the runner's progress states", () => {
    expect(() => sqlProgressRank('x', ['SUCCEEDED'])).toThrow("SUCCEEDED is not a runner's progress state");
  });
});
