import { createInterface } from 'node:readline';
import { z } from 'zod';
import { PLATFORM_KINDS, runEventSchema } from '@conveyor/run-events';
import {
  SetupFailure,
  type Harness,
  type HarnessContext,
  type HarnessInput,
  type HarnessOutcome,
  type ModelAccess,
} from './harness';

const resultSchema = z.object({
  kind: z.literal('result'),
  state: z.enum(['SUCCEEDED', 'FAILED', 'BLOCKED', 'ERROR']),
  message: z.string().optional(),
  error_code: z.string().optional(),
});

const KILL_GRACE_MS = 3000;

/**
 * The run's model proxy under the variables the vendor CLIs and SDKs read, so an adapter can start any of them as is.
 * The key variables hold the per-run token, never a provider key (docs/harnesses.md).
 */
function modelAccessEnv(access: ModelAccess | undefined): Record<string, string> {
  if (!access) return {};
  return {
    ANTHROPIC_BASE_URL: access.baseUrls.anthropic,
    ANTHROPIC_API_KEY: access.token,
    OPENAI_BASE_URL: access.baseUrls.openai,
    OPENAI_API_KEY: access.token,
    GOOGLE_GEMINI_BASE_URL: access.baseUrls.gemini,
    GEMINI_API_KEY: access.token,
    CONVEYOR_MODEL: access.model,
  };
}

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
    if (!this.command)
      throw new SetupFailure(`No command is configured for the "${this.type}" harness on this runner`);
  }

  run(input: HarnessInput, ctx: HarnessContext): Promise<HarnessOutcome> {
    const child = ctx.sandbox.exec({
      argv: ['/bin/sh', '-c', this.command ?? 'false'],
      env: { ...ctx.env, ...modelAccessEnv(input.modelAccess) },
      stdin: 'pipe',
    });
    const stdin = child.stdin!;
    const send = (message: object) => {
      if (stdin.writable) stdin.write(`${JSON.stringify(message)}\n`);
    };
    stdin.on('error', () => undefined);
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
        result =
          state === 'SUCCEEDED'
            ? { state, message }
            : { state, message: message ?? `Agent reported ${state}`, errorCode: error_code };
        return;
      }
      const event = runEventSchema.safeParse(value);
      if (event.success && !PLATFORM_KINDS.has(event.data.kind)) ctx.emit(event.data);
      else ctx.emit({ kind: 'log', level: 'warn', text: `unrecognized agent output: ${line.slice(0, 500)}` });
    });
    createInterface({ input: child.stderr }).on('line', (line) =>
      ctx.emit({ kind: 'log', level: 'warn', text: line }),
    );

    const forward = setInterval(() => {
      for (const message of ctx.inbox.drain()) send({ type: 'followup', message });
    }, 100);
    // The agent gets a moment to wind down after `cancel`, then its whole process tree goes.
    const onAbort = () => {
      send({ type: 'cancel' });
      // The agent may be gone by then: a failed kill must not end the runner.
      setTimeout(() => void child.kill(KILL_GRACE_MS).catch(() => undefined), KILL_GRACE_MS).unref();
    };
    ctx.signal.addEventListener('abort', onAbort, { once: true });

    return child.exited.then(({ code, signal, limit }): HarnessOutcome => {
      clearInterval(forward);
      ctx.signal.removeEventListener('abort', onAbort);
      if (result) return result;
      if (ctx.signal.aborted) return { state: 'ERROR', message: 'cancelled' };
      if (limit)
        return {
          state: 'ERROR',
          message: `The run exceeded its ${limit} limit`,
          errorCode: 'resource_unavailable',
        };
      if (code === 0) return { state: 'SUCCEEDED', message: 'Agent exited' };
      return {
        state: 'FAILED',
        message: `Agent exited with ${signal ? `signal ${signal}` : `code ${code}`}`,
      };
    });
  }
}
