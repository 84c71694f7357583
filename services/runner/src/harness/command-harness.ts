import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { z } from 'zod';
import { runEventSchema } from '@conveyor/run-events';
import { SetupFailure, type Harness, type HarnessContext, type HarnessInput, type HarnessOutcome } from './harness';

const resultSchema = z.object({
  kind: z.literal('result'),
  state: z.enum(['SUCCEEDED', 'FAILED', 'BLOCKED', 'ERROR']),
  message: z.string().optional(),
  error_code: z.string().optional(),
});

const KILL_GRACE_MS = 3000;

/**
 * Runs any agent CLI as a child process in the run's workspace, speaking JSON lines on stdio both ways:
 * the runner writes `start`, `followup` and `cancel` messages to stdin; the agent writes run events (the
 * packages/run-events vocabulary) and finally one `{"kind":"result",...}` line to stdout. See docs/harness-protocol.md.
 */
export class CommandHarness implements Harness {
  constructor(
    private readonly type: string,
    private readonly command: string | undefined,
  ) {}

  async prepare(): Promise<void> {
    if (!this.command) throw new SetupFailure(`No command is configured for the "${this.type}" harness on this runner`);
  }

  run(input: HarnessInput, ctx: HarnessContext): Promise<HarnessOutcome> {
    const child = spawn('/bin/sh', ['-c', this.command ?? 'false'], {
      cwd: input.workspaceDir,
      stdio: ['pipe', 'pipe', 'pipe'],
      env: {
        ...process.env,
        CONVEYOR_RUN_ID: input.runId,
        CONVEYOR_WORKSPACE: input.workspaceDir,
        // The agent's credential for harness support (report-artifact, judge scores); dies with the execution.
        CONVEYOR_API_KEY: input.runApiKey ?? '',
        CONVEYOR_API_BASE_URL: input.apiBaseUrl ?? '',
      },
    });
    const send = (message: object) => {
      if (child.stdin.writable) child.stdin.write(`${JSON.stringify(message)}\n`);
    };
    child.stdin.on('error', () => undefined);
    send({
      type: 'start',
      run_id: input.runId,
      execution: input.execution,
      prompt: input.prompt,
      followups: input.followups,
      config: input.config,
      mode: input.mode,
      debug_session: input.debugSession,
      workspace: input.workspaceDir,
      skill_instructions: input.skillInstructions ?? '',
    });

    let result: HarnessOutcome | undefined;
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (!line.trim()) return;
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        ctx.emit({ kind: 'log', level: 'info', text: line });
        return;
      }
      const final = resultSchema.safeParse(value);
      if (final.success) {
        const { state, message, error_code } = final.data;
        result = state === 'SUCCEEDED' ? { state, message } : { state, message: message ?? `Agent reported ${state}`, errorCode: error_code };
        return;
      }
      const event = runEventSchema.safeParse(value);
      if (event.success && event.data.kind !== 'state_changed' && event.data.kind !== 'followup_received') ctx.emit(event.data);
      else ctx.emit({ kind: 'log', level: 'warn', text: `unrecognized agent output: ${line.slice(0, 500)}` });
    });
    createInterface({ input: child.stderr }).on('line', (line) => ctx.emit({ kind: 'log', level: 'warn', text: line }));

    const forward = setInterval(() => {
      for (const message of ctx.inbox.drain()) send({ type: 'followup', message });
    }, 100);
    const onAbort = () => {
      send({ type: 'cancel' });
      setTimeout(() => child.kill('SIGTERM'), KILL_GRACE_MS).unref();
      setTimeout(() => child.kill('SIGKILL'), KILL_GRACE_MS * 2).unref();
    };
    ctx.signal.addEventListener('abort', onAbort, { once: true });

    return new Promise((resolve) => {
      child.on('error', (err) => {
        result ??= { state: 'FAILED', message: `Agent could not start: ${err.message}`, errorCode: 'environment_setup_failed' };
      });
      child.on('close', (code, signal) => {
        clearInterval(forward);
        ctx.signal.removeEventListener('abort', onAbort);
        if (result) return resolve(result);
        if (ctx.signal.aborted) return resolve({ state: 'ERROR', message: 'cancelled' });
        if (code === 0) return resolve({ state: 'SUCCEEDED', message: 'Agent exited' });
        resolve({ state: 'FAILED', message: `Agent exited with ${signal ? `signal ${signal}` : `code ${code}`}` });
      });
    });
  }
}
