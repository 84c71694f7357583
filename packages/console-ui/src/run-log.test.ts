import { RunLog, type StreamedEvent } from './run-log';

let seq = 0;
const ev = (kind: string, data: Record<string, unknown>, execution = 1): StreamedEvent => ({
  sequence: ++seq,
  kind,
  created_at: '2026-11-23T00:00:00.000Z',
  execution,
  data,
});

describe('RunLog', () => {
  it('groups a turn, pairs tool results with calls and sums usage', () => {
    const log = new RunLog();
    [
      ev('state_changed', { from: null, to: 'QUEUED' }),
      ev('user_message', { text: 'fix it', source: 'prompt' }),
      ev('agent_message', { text: 'looking' }),
      ev('tool_call', { call_id: 'c1', name: 'bash', input: { cmd: 'ls' } }),
      ev('tool_result', { call_id: 'c1', output: { stdout: 'a' } }),
      ev('usage', { input_tokens: 10, output_tokens: 3 }),
      ev('usage', { input_tokens: 5, output_tokens: 1, cost_usd: 0.5 }),
      ev('user_message', { text: 'more', source: 'followup' }, 2),
      ev('tool_result', { call_id: 'c9', output: 'x', is_error: true }, 2),
    ].forEach((e) => log.apply(e));
    expect(log.timeline.map((e) => e.kind)).toEqual(['state_changed']);
    expect(log.messages.map((m) => m.role)).toEqual(['user', 'agent', 'user', 'agent']);
    expect(log.messages[1]!.steps).toEqual([
      expect.objectContaining({ type: 'text', text: 'looking' }),
      expect.objectContaining({
        type: 'tool',
        name: 'bash',
        input: { cmd: 'ls' },
        output: { stdout: 'a' },
        status: 'completed',
      }),
    ]);
    expect(log.messages[3]!.steps[0]).toEqual(
      expect.objectContaining({ type: 'tool', name: '(unknown tool)', status: 'failed' }),
    );
    expect(log.usage).toEqual({ inputTokens: 15, outputTokens: 4, costUsd: 0.5 });
  });

  it('ignores repeats of events it already applied (a resumed stream)', () => {
    const log = new RunLog();
    const first = ev('agent_message', { text: 'one' });
    const second = ev('agent_message', { text: 'two' });
    expect(log.apply(first)).toBe(true);
    expect(log.apply(second)).toBe(true);
    expect(log.apply(first)).toBe(false);
    expect(log.apply(second)).toBe(false);
    expect(log.received).toBe(2);
    expect(log.messages[0]!.steps).toHaveLength(2);
  });
});
