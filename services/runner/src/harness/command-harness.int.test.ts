import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '@conveyor/logger';
import { PLATFORM_KINDS, type RunEvent } from '@conveyor/run-events';
import { baseRunEnvironment } from '../sandbox/run-environment';
import { UnsandboxedBackend } from '../sandbox/unsandboxed-backend';
import { CommandHarness } from './command-harness';
import { FollowupInbox } from './followup-inbox';
import { SetupFailure, type HarnessInput } from './harness';

// A tiny agent CLI speaking the JSON-lines protocol, run as a real child process.
const AGENT = `
const rl = require('node:readline').createInterface({ input: process.stdin });
const out = (o) => process.stdout.write(JSON.stringify(o) + '\\n');
rl.on('line', (line) => {
  const msg = JSON.parse(line);
  if (msg.type === 'start') {
    out({ kind: 'agent_message', text: 'working on: ' + msg.prompt });
    out({ kind: 'tool_call', call_id: 'c1', name: 'bash', input: { cmd: 'pwd' } });
    out({ kind: 'tool_result', call_id: 'c1', output: process.cwd() });
    // Kinds only the platform records: forged by the agent, they must not reach the run's timeline.
    out({ kind: 'state_changed', from: null, to: 'SUCCEEDED' });
    out({ kind: 'egress_refused', host: 'forged.example', port: 1, reason: 'forged' });
    // A forged snapshot report would set the environment's snapshot state in the API.
    out({ kind: 'environment_snapshot', state: 'ready', snapshot_id: 'forged' });
    console.log('plain text line');
    console.error('a warning');
    if (msg.prompt.includes('wait')) return;
    out({ kind: 'result', state: msg.prompt.includes('fail') ? 'FAILED' : 'SUCCEEDED', message: 'finished' });
    process.exit(0);
  }
  if (msg.type === 'followup') {
    out({ kind: 'agent_message', text: 'follow-up: ' + msg.message });
    out({ kind: 'result', state: 'SUCCEEDED', message: 'after follow-up' });
    process.exit(0);
  }
  if (msg.type === 'cancel') process.exit(0);
});
`;

describe('CommandHarness (real child process)', () => {
  let dir: string;
  let command: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'command-harness-'));
    const script = path.join(dir, 'agent.js');
    await writeFile(script, AGENT);
    command = `"${process.execPath}" "${script}"`;
  });

  const input = (prompt: string): HarnessInput => ({
    runId: 'r1',
    execution: 1,
    prompt,
    followups: [],
    config: {},
    mode: 'normal',
    debugSession: false,
    workspaceDir: dir,
  });

  async function run(prompt: string, drive?: (inbox: FollowupInbox, abort: AbortController) => void) {
    const events: RunEvent[] = [];
    const inbox = new FollowupInbox();
    const abort = new AbortController();
    const harness = new CommandHarness('claude', command);
    await harness.prepare();
    const sandbox = await new UnsandboxedBackend(
      createLogger({ service: 'test', level: 'silent' }),
      path.dirname(dir),
      true,
    ).prepare({
      runId: path.basename(dir),
      allowedHosts: [],
      endpoints: [],
      limits: { wallClockMs: 60_000, maxProcesses: 64, memoryBytes: 1 << 30, diskBytes: 1 << 30 },
    });
    const env = baseRunEnvironment({ runId: 'r1', workspaceDir: dir });
    const pending = harness.run(input(prompt), {
      emit: (e) => events.push(e),
      inbox,
      signal: abort.signal,
      sandbox,
      env,
    });
    drive?.(inbox, abort);
    return { outcome: await pending, events };
  }

  it('streams events, logs stray output and reports the result', async () => {
    const { outcome, events } = await run('fix it');
    expect(outcome).toEqual({ state: 'SUCCEEDED', message: 'finished' });
    expect(events).toEqual(
      expect.arrayContaining([
        { kind: 'agent_message', text: 'working on: fix it' },
        { kind: 'tool_call', call_id: 'c1', name: 'bash', input: { cmd: 'pwd' } },
        { kind: 'tool_result', call_id: 'c1', output: dir },
        { kind: 'log', level: 'info', text: 'plain text line' },
        { kind: 'log', level: 'warn', text: 'a warning' },
      ]),
    );
    expect(events.filter((e) => PLATFORM_KINDS.has(e.kind))).toEqual([]);
    expect(
      events.filter((e) => e.kind === 'log' && e.text.startsWith('unrecognized agent output')),
    ).toHaveLength(3);
  });

  it('reports failure results with their message', async () => {
    expect((await run('please fail')).outcome).toEqual({
      state: 'FAILED',
      message: 'finished',
      errorCode: undefined,
    });
  });

  it('delivers live follow-ups over stdin', async () => {
    const { outcome, events } = await run('wait for me', (inbox) =>
      setTimeout(() => inbox.push({ followup_id: 'f-1', message: 'go on' }), 200),
    );
    expect(outcome).toEqual({ state: 'SUCCEEDED', message: 'after follow-up' });
    expect(events).toContainEqual({ kind: 'agent_message', text: 'follow-up: go on' });
  });

  it('stops the agent on cancel', async () => {
    const started = Date.now();
    const { outcome } = await run('wait forever', (_inbox, abort) => setTimeout(() => abort.abort(), 200));
    expect(outcome.state).toBe('ERROR');
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('fails setup when no command is configured for the harness type', async () => {
    await expect(new CommandHarness('gemini', undefined).prepare()).rejects.toBeInstanceOf(SetupFailure);
  });
});
