import { MAX_STEP_CHARS, normalizeConversation, type StoredEvent } from './normalize-conversation';

const t0 = Date.parse('2026-11-22T10:00:00.000Z');
let n = 0;
function ev(
  kind: string,
  data: Record<string, unknown>,
  opts: { runId?: string; execution?: number } = {},
): StoredEvent {
  n += 1;
  return {
    id: BigInt(n),
    runId: opts.runId ?? 'run-1',
    execution: opts.execution ?? 1,
    kind,
    data: { kind, ...data },
    createdAt: new Date(t0 + n * 1000),
  };
}

describe('normalizeConversation', () => {
  beforeEach(() => {
    n = 0;
  });

  it('groups a turn into one agent message: text, tool calls paired with results by call_id, and events', () => {
    const events = [
      ev('state_changed', { from: null, to: 'QUEUED' }),
      ev('user_message', { text: 'Fix the build', source: 'prompt' }),
      ev('setup_step', { step: 'workspace', status: 'started' }),
      ev('agent_message', { text: 'Looking at the failure.' }),
      ev('tool_call', { call_id: 'c1', name: 'bash', input: { cmd: 'npm test' } }),
      ev('tool_call', { call_id: 'c2', name: 'read', input: { path: 'a.ts' } }),
      ev('tool_result', { call_id: 'c2', output: 'export {}' }),
      ev('tool_result', { call_id: 'c1', output: { exit: 1 }, is_error: true }),
      ev('usage', { input_tokens: 10 }),
      ev('log', { level: 'debug', text: 'noise' }),
      ev('log', { level: 'warn', text: 'flaky test' }),
      ev('artifact', { artifact_type: 'PULL_REQUEST', data: { url: 'https://x/pull/1', branch: 'fix' } }),
      ev('agent_message', { text: 'Opened a PR.' }),
    ];
    const conversation = normalizeConversation('conv-1', ['run-1'], events);
    expect(conversation).toEqual({
      conversation_id: 'conv-1',
      run_id: 'run-1',
      run_ids: ['run-1'],
      messages: [
        {
          id: '2',
          role: 'user',
          run_id: 'run-1',
          execution: 1,
          created_at: '2026-11-22T10:00:02.000Z',
          source: 'prompt',
          steps: [{ id: '2', type: 'text', created_at: '2026-11-22T10:00:02.000Z', text: 'Fix the build' }],
        },
        {
          id: '4',
          role: 'agent',
          run_id: 'run-1',
          execution: 1,
          created_at: '2026-11-22T10:00:04.000Z',
          steps: [
            {
              id: '4',
              type: 'text',
              created_at: '2026-11-22T10:00:04.000Z',
              text: 'Looking at the failure.',
            },
            {
              id: '5',
              type: 'tool_call',
              created_at: '2026-11-22T10:00:05.000Z',
              call_id: 'c1',
              name: 'bash',
              input: { cmd: 'npm test' },
              status: 'failed',
              output: { exit: 1 },
              completed_at: '2026-11-22T10:00:08.000Z',
            },
            {
              id: '6',
              type: 'tool_call',
              created_at: '2026-11-22T10:00:06.000Z',
              call_id: 'c2',
              name: 'read',
              input: { path: 'a.ts' },
              status: 'completed',
              output: 'export {}',
              completed_at: '2026-11-22T10:00:07.000Z',
            },
            {
              id: '11',
              type: 'event',
              created_at: '2026-11-22T10:00:11.000Z',
              kind: 'log',
              data: { level: 'warn', text: 'flaky test' },
            },
            {
              id: '12',
              type: 'event',
              created_at: '2026-11-22T10:00:12.000Z',
              kind: 'artifact',
              data: { artifact_type: 'PULL_REQUEST', data: { url: 'https://x/pull/1', branch: 'fix' } },
            },
            { id: '13', type: 'text', created_at: '2026-11-22T10:00:13.000Z', text: 'Opened a PR.' },
          ],
        },
      ],
    });
  });

  it('spans executions and runs: follow-ups start user messages, each execution its own agent message', () => {
    const events = [
      ev('user_message', { text: 'first', source: 'prompt' }),
      ev('agent_message', { text: 'done 1' }),
      ev('user_message', { text: 'and now?', source: 'followup' }, { execution: 2 }),
      ev('tool_call', { call_id: 'c1', name: 'bash', input: {} }, { execution: 2 }),
      ev('agent_message', { text: 'done 2' }, { execution: 2 }),
      // The same call_id in another run is another call.
      ev('tool_result', { call_id: 'c1', output: 'from run 2' }, { runId: 'run-2' }),
      ev('agent_message', { text: 'run 2 says hi' }, { runId: 'run-2' }),
    ];
    const conversation = normalizeConversation('conv-1', ['run-1', 'run-2'], events.reverse());
    expect(conversation.run_id).toBe('run-2');
    expect(
      conversation.messages.map((m) => [m.role, m.run_id, m.execution, m.source, m.steps.map((s) => s.type)]),
    ).toEqual([
      ['user', 'run-1', 1, 'prompt', ['text']],
      ['agent', 'run-1', 1, undefined, ['text']],
      ['user', 'run-1', 2, 'followup', ['text']],
      ['agent', 'run-1', 2, undefined, ['tool_call', 'text']],
      ['agent', 'run-2', 1, undefined, ['tool_call', 'text']],
    ]);
    expect(conversation.messages[3]!.steps[0]).toMatchObject({
      call_id: 'c1',
      status: 'pending',
      name: 'bash',
    });
    expect(conversation.messages[4]!.steps[0]).toMatchObject({
      call_id: 'c1',
      status: 'completed',
      name: null,
      input: null,
      output: 'from run 2',
    });
  });

  it('cuts oversized texts and tool payloads and says so', () => {
    const big = 'x'.repeat(MAX_STEP_CHARS + 10);
    const conversation = normalizeConversation(
      'c',
      ['run-1'],
      [
        ev('agent_message', { text: big }),
        ev('tool_call', { call_id: 'c1', name: 'write', input: { content: big } }),
        ev('tool_result', { call_id: 'c1', output: big }),
      ],
    );
    const [text, call] = conversation.messages[0]!.steps as unknown as [
      { text: string; truncated?: boolean },
      { input: unknown; output: unknown; truncated?: boolean },
    ];
    expect(text.text).toHaveLength(MAX_STEP_CHARS);
    expect(text.truncated).toBe(true);
    expect(typeof call.input).toBe('string');
    expect((call.input as string).startsWith('{"content":"xxx')).toBe(true);
    expect((call.output as string).length).toBe(MAX_STEP_CHARS);
    expect(call.truncated).toBe(true);
  });

  it('is empty for a run with no conversation events yet', () => {
    expect(
      normalizeConversation('c', ['r'], [ev('state_changed', { from: null, to: 'QUEUED' })]).messages,
    ).toEqual([]);
  });
});
