import { runEventSchema, TERMINAL_STATES } from './run-event';

describe('run events', () => {
  it('accepts each harness-side kind and rejects unknown ones', () => {
    expect(runEventSchema.parse({ kind: 'agent_message', text: 'hi' })).toEqual({
      kind: 'agent_message',
      text: 'hi',
    });
    expect(
      runEventSchema.safeParse({ kind: 'tool_call', call_id: 'c1', name: 'bash', input: { cmd: 'ls' } })
        .success,
    ).toBe(true);
    expect(
      runEventSchema.safeParse({
        kind: 'artifact',
        artifact_type: 'PULL_REQUEST',
        data: { url: 'u', branch: 'b' },
      }).success,
    ).toBe(true);
    expect(runEventSchema.safeParse({ kind: 'teleport' }).success).toBe(false);
    expect(runEventSchema.safeParse({ kind: 'state_changed', from: null, to: 'NOPE' }).success).toBe(false);
  });

  it('treats BLOCKED as terminal, as cancel does', () => {
    expect(TERMINAL_STATES.has('BLOCKED')).toBe(true);
    expect(TERMINAL_STATES.has('INPROGRESS')).toBe(false);
  });
});
