import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseDemoDirectives, type DemoDirective } from './demo-directives';
import {
  SetupFailure,
  type Harness,
  type HarnessContext,
  type HarnessInput,
  type HarnessOutcome,
} from './harness';

/** The input this execution acts on: the prompt first time, the follow-ups that started a continuation later. */
function instructions(input: HarnessInput): string[] {
  // A skill's instructions come first, as a base prompt would; their @demo directives steer the demo too.
  const first = input.skillInstructions ? [input.skillInstructions, input.prompt] : [input.prompt];
  return input.execution === 1 || input.debugSession ? [...first, ...input.followups] : input.followups;
}

/** Deterministic built-in harness for local use and tests; see demo-directives.ts for the steering language. */
export class DemoHarness implements Harness {
  async prepare(input: HarnessInput): Promise<void> {
    if (input.debugSession) return;
    for (const text of instructions(input)) {
      const setupFail = parseDemoDirectives(text).find((d) => d.verb === 'setup-fail');
      if (setupFail) throw new SetupFailure(setupFail.message);
    }
  }

  async run(input: HarnessInput, ctx: HarnessContext): Promise<HarnessOutcome> {
    if (input.debugSession) return this.debug(input, ctx);
    for (const text of instructions(input)) {
      const outcome = await this.follow(parseDemoDirectives(text), input, ctx);
      if (outcome) return outcome;
    }
    // Follow-ups that arrived while working are answered before finishing.
    for (const message of ctx.inbox.drain()) {
      const outcome = await this.follow(parseDemoDirectives(message), input, ctx, message);
      if (outcome) return outcome;
    }
    const summary =
      input.prompt.split('\n').find((l) => l.trim() && !l.trim().startsWith('@demo')) ?? 'the task';
    ctx.emit({ kind: 'agent_message', text: `Done: ${summary.trim()}` });
    return { state: 'SUCCEEDED', message: 'Demo run completed' };
  }

  private async follow(
    directives: DemoDirective[],
    input: HarnessInput,
    ctx: HarnessContext,
    echo?: string,
  ): Promise<HarnessOutcome | undefined> {
    if (echo !== undefined) ctx.emit({ kind: 'agent_message', text: `Received follow-up: ${echo}` });
    for (const d of directives) {
      if (ctx.signal.aborted) return { state: 'ERROR', message: 'cancelled' };
      switch (d.verb) {
        case 'message':
          ctx.emit({ kind: 'agent_message', text: d.text });
          break;
        case 'sleep':
          await this.sleepAnswering(d.ms, ctx);
          break;
        case 'tool': {
          const callId = randomUUID();
          ctx.emit({ kind: 'tool_call', call_id: callId, name: d.name, input: d.input });
          ctx.emit({ kind: 'tool_result', call_id: callId, output: d.output });
          break;
        }
        case 'artifact':
          ctx.emit({ kind: 'artifact', artifact_type: d.artifactType, data: d.data });
          break;
        case 'usage':
          ctx.emit({ kind: 'usage', input_tokens: d.inputTokens, output_tokens: d.outputTokens });
          break;
        case 'fail':
          return { state: 'FAILED', message: d.message };
        case 'error':
          return { state: 'ERROR', message: d.message, errorCode: 'internal_error' };
        case 'block':
          return { state: 'BLOCKED', message: d.message };
        case 'await-followup': {
          const message = await ctx.inbox.next(ctx.signal, d.timeoutMs);
          if (message === undefined)
            return ctx.signal.aborted
              ? { state: 'ERROR', message: 'cancelled' }
              : { state: 'BLOCKED', message: 'No follow-up arrived in time' };
          const outcome = await this.follow(parseDemoDirectives(message), input, ctx, message);
          if (outcome) return outcome;
          break;
        }
        case 'attachments':
          ctx.emit({
            kind: 'agent_message',
            text: `Attachments: ${(input.attachments ?? []).map((f) => `attachments/${f}`).join(', ') || 'none'}`,
          });
          break;
        case 'setup-fail':
          break;
      }
    }
    return undefined;
  }

  /** Sleeping in slices keeps a cancelled run stoppable within a heartbeat and answers live follow-ups. */
  private async sleepAnswering(ms: number, ctx: HarnessContext): Promise<void> {
    const until = Date.now() + ms;
    while (Date.now() < until && !ctx.signal.aborted) {
      await sleep(Math.min(100, until - Date.now()), undefined, { signal: ctx.signal }).catch(
        () => undefined,
      );
      for (const message of ctx.inbox.drain())
        ctx.emit({ kind: 'agent_message', text: `Received follow-up: ${message}` });
    }
  }

  private async debug(input: HarnessInput, ctx: HarnessContext): Promise<HarnessOutcome> {
    for (const message of input.followups)
      ctx.emit({ kind: 'agent_message', text: `Debug agent in retained session: ${message}` });
    return { state: 'SUCCEEDED', message: 'Debug session turn completed' };
  }
}
