import path from 'node:path';
import { HOME_DIR_NAME, workspaceDirs } from '../../sandbox/run-environment';
import { SandboxLost, type OutputOffsets, type SandboxProcess } from '../../sandbox/run-sandbox';
import {
  SetupFailure,
  type Harness,
  type DurableAgent,
  type HarnessContext,
  type HarnessInput,
  type HarnessOutcome,
  type SessionFile,
} from '../harness';
import type { CliProfile, CliSetup, TurnEnd } from './cli-profile';
import { mcpServersOf } from './mcp-servers';
import { outputLines } from './output-lines';
import { debugMessage, firstMessage, skillNameOf, skillSpecOf } from './prompt-assembly';
import { inlinable, withPrelude, type LaunchPrelude } from './launch-prelude';
import { readSandboxFile, writeSandboxFile } from './sandbox-files';

/** SIGTERM first; what still runs after this is killed. */
const KILL_GRACE_MS = 2000;
/** How often follow-ups are taken from the inbox while a process runs. */
const INBOX_POLL_MS = 200;
const MAX_STATUS_CHARS = 1000;
const ERROR_TAIL_LINES = 20;

interface ProcessResult {
  turnEnd?: TurnEnd;
  code: number | null;
  signal: NodeJS.Signals | null;
  limit?: string;
  /** The sandbox went away around the process (`SandboxExit.lost`). */
  lost?: string;
  /** The CLI's last words: its stderr lines and the error events it printed on stdout. */
  errorTail: string[];
}

/** The messages `session` does not hold (as JSON strings, the way the CLIs write the messages they were given). */
const notHeld = (messages: readonly string[], session: SessionFile | undefined) =>
  messages.filter((m) => !session?.content.includes(JSON.stringify(m).slice(1, -1)));

const clip = (text: string) =>
  text.length > MAX_STATUS_CHARS ? `${text.slice(0, MAX_STATUS_CHARS - 1)}…` : text;

/**
 * Runs a vendor agent CLI (Claude Code, Codex, Gemini CLI) inside the run's sandbox, in the workspace, with a private
 * HOME. The profile says what differs between CLIs; this class starts processes, feeds them messages and follow-ups,
 * maps their JSON-lines stream to run events, cancels them, and hands back the CLI's own session file as the
 * execution's transcript and as the session a later execution (on any runner) restores and resumes.
 */
export class CliHarness implements Harness {
  readonly laysOutWorkspace = true;

  constructor(private readonly profile: CliProfile) {}

  async prepare(input: HarnessInput): Promise<void> {
    if (!input.modelAccess)
      throw new SetupFailure(
        `The ${this.profile.name} harness has no model access on this runner (no model proxy is configured)`,
      );
  }

  async run(input: HarnessInput, ctx: HarnessContext): Promise<HarnessOutcome> {
    const setup = this.setupOf(input, ctx);
    const env = { ...ctx.env, HOME: setup.home, ...this.profile.env(setup) };
    const prelude = await this.preludeOf(setup, env, ctx);
    const glob = this.profile.sessionGlob(setup);
    const before =
      (await readSandboxFile(ctx.sandbox, env, glob)) ??
      (await this.restoreSession(input.session, setup, env, ctx, glob));
    const resume = before !== undefined;
    if (input.resumeOnly && !resume)
      return {
        state: 'ERROR',
        message: `The run's checkpoint holds no ${this.profile.name} session to resume`,
        errorCode: 'resource_unavailable',
      };
    // An agent lost with its sandbox resumes from its last checkpointed turn: the follow-ups it was given since are
    // given again, after the message saying where it is (those its restored session holds it has already).
    const messages = resume
      ? [...input.followups, ...(input.resumeOnly ? notHeld(ctx.inbox.taken(), before) : [])]
      : input.debugSession
        ? [debugMessage(input)]
        : [firstMessage(input, setup.skill?.name), ...input.followups];
    return this.drive({ setup, env, ctx, glob, before, prelude }, messages, 0);
  }

  /**
   * The CLI's process a previous runner process started, read on from where it stopped reading (its turns so far are
   * the previous process's to have reported); then the execution goes on as `run` would have.
   */
  async resume(input: HarnessInput, ctx: HarnessContext, agent: DurableAgent): Promise<HarnessOutcome> {
    const setup = this.setupOf(input, ctx);
    const env = { ...ctx.env, HOME: setup.home, ...this.profile.env(setup) };
    const prelude = await this.preludeOf(setup, env, ctx);
    const proc = ctx.sandbox.attachDurable!(agent.offsets);
    const handled = { ...agent.offsets };
    ctx.durable?.({ processIndex: agent.processIndex, proc, handled });
    const glob = this.profile.sessionGlob(setup);
    const result = await this.follow(proc, ctx, [], {
      processIndex: agent.processIndex,
      previousSession: '',
      glob,
      handled,
    });
    if (result.lost) throw new SandboxLost(result.lost);
    const messages = result.turnEnd?.ok ? ctx.inbox.drain() : [];
    return this.drive({ setup, env, ctx, glob, prelude }, messages, agent.processIndex + 1, result);
  }

  /** Runs processes until the messages are handled or one fails; then the outcome, transcript and session. */
  private async drive(
    run: {
      setup: CliSetup;
      env: Record<string, string>;
      ctx: HarnessContext;
      glob: string;
      before?: SessionFile;
      prelude: LaunchPrelude;
    },
    messages: string[],
    firstIndex: number,
    resumed?: ProcessResult,
  ): Promise<HarnessOutcome> {
    const { setup, env, ctx, glob, before, prelude } = run;
    let result = resumed;
    for (let index = firstIndex; messages.length > 0 && !ctx.signal.aborted; index++) {
      // A live CLI takes every queued message (and later follow-ups) on stdin; the others handle one per process.
      const batch = this.profile.liveInput ? messages.splice(0) : messages.splice(0, 1);
      const previous = index === 0 ? before : await readSandboxFile(ctx.sandbox, env, glob);
      result = await this.runProcess({ setup, env, ctx, prelude }, batch, previous, index);
      if (result.lost && !ctx.signal.aborted) throw new SandboxLost(result.lost);
      if (!result.turnEnd?.ok) break;
      // Follow-ups that arrived after the process stopped listening resume the session once it has ended.
      messages.push(...ctx.inbox.drain());
    }

    const after = await readSandboxFile(ctx.sandbox, env, glob).catch(() => undefined);
    // This execution's part: what the CLI appended, or the whole file when it wrote a new one (Gemini CLI may).
    const appended =
      before && after && after.content.subarray(0, before.content.length).equals(before.content);
    const transcript = appended ? after.content.subarray(before.content.length) : after?.content;
    return {
      ...this.outcomeOf(result, ctx),
      ...(transcript && transcript.length > 0 ? { transcript } : {}),
      ...(after
        ? { session: { path: path.posix.relative(setup.home, after.path), content: after.content } }
        : {}),
    };
  }

  /**
   * Writes the session an earlier execution left (kept by the platform, maybe from another runner) into this HOME,
   * where the CLI looks for it. Returns it as read back, or undefined when there is none to resume.
   */
  private async restoreSession(
    session: SessionFile | undefined,
    setup: CliSetup,
    env: Record<string, string>,
    ctx: HarnessContext,
    glob: string,
  ) {
    if (!session || session.content.length === 0) return undefined;
    const relative = this.profile.restorePath?.(setup, session.path) ?? session.path;
    const target = path.posix.join(setup.home, relative);
    if (path.posix.isAbsolute(relative) || !target.startsWith(`${setup.home}/`)) {
      ctx.emit({
        kind: 'log',
        level: 'warn',
        text: `The kept session file ${JSON.stringify(session.path)} is outside the run's HOME; starting a new session`,
      });
      return undefined;
    }
    await writeSandboxFile(ctx.sandbox, env, target, session.content);
    ctx.emit({
      kind: 'log',
      level: 'info',
      text: `Restored the ${this.profile.name} session of the run's earlier executions`,
    });
    return readSandboxFile(ctx.sandbox, env, glob);
  }

  /**
   * The workspace's directories and the profile's HOME files, made by the exec that starts the CLI (launch-prelude.ts);
   * a file that cannot travel as an argument is written now, by an exec of its own.
   */
  private async preludeOf(
    setup: CliSetup,
    env: Record<string, string>,
    ctx: HarnessContext,
  ): Promise<LaunchPrelude> {
    const files: LaunchPrelude['files'] = [];
    for (const file of this.profile.files(setup)) {
      if (inlinable(file.content)) files.push(file);
      else await writeSandboxFile(ctx.sandbox, env, file.path, file.content);
    }
    return { dirs: workspaceDirs(setup.workspaceDir), files };
  }

  private setupOf(input: HarnessInput, ctx: HarnessContext): CliSetup {
    const { servers, unsupported } = mcpServersOf(input.config);
    for (const name of unsupported) {
      ctx.emit({
        kind: 'log',
        level: 'warn',
        text: `MCP server "${name}" is not started: only command and url servers can run inside the run's sandbox`,
      });
    }
    const spec = skillSpecOf(input.config);
    const skill = input.skillInstructions?.trim()
      ? {
          name: skillNameOf(spec ?? 'run-skill'),
          description: `The skill this run was started with (${spec ?? 'run skill'})`,
          instructions: input.skillInstructions,
        }
      : undefined;
    return {
      runId: input.runId,
      workspaceDir: input.workspaceDir,
      home: path.posix.join(input.workspaceDir, HOME_DIR_NAME),
      model: input.modelAccess!,
      mcpServers: servers,
      skill,
    };
  }

  /**
   * One CLI process: a new session or one resuming `session`, handling `messages` (and, for live CLIs, follow-ups) to
   * the end. Durable: a restarted runner takes it back (`resume`).
   */
  private async runProcess(
    {
      setup,
      env,
      ctx,
      prelude,
    }: { setup: CliSetup; env: Record<string, string>; ctx: HarnessContext; prelude: LaunchPrelude },
    messages: string[],
    session: { path: string; content: Buffer } | undefined,
    processIndex: number,
  ): Promise<ProcessResult> {
    const live = this.profile.liveInput;
    const first = live ? '' : (messages[0] ?? '');
    ctx.mark?.('cli_exec');
    const proc = ctx.sandbox.exec({
      argv: withPrelude(prelude, [
        ...this.profile.command(),
        ...this.profile.args(setup, first, session?.path),
      ]),
      env,
      stdin: live ? 'pipe' : 'ignore',
      durable: true,
    });
    const handled = { stdout: 0, stderr: 0 };
    ctx.durable?.({ processIndex, proc, handled });
    const pending = live ? [...messages] : [];
    proc.stdin?.on('error', () => undefined);
    if (live) proc.stdin?.write(this.profile.stdinLine!(pending.shift() ?? ''));
    const previousSession = session?.content.toString('utf8') ?? '';
    const glob = this.profile.sessionGlob(setup);
    return this.follow(proc, ctx, pending, { processIndex, previousSession, glob, handled });
  }

  /**
   * Maps a CLI process's output to run events to its end, feeding a live one `pending` and the follow-ups; each turn
   * it reports is checkpointed once its session file (`glob`) holds it. `handled` moves past each line once its
   * events are emitted (what a restarted runner reads on from).
   */
  private async follow(
    proc: SandboxProcess,
    ctx: HarnessContext,
    pending: string[],
    {
      processIndex,
      previousSession,
      glob,
      handled,
    }: { processIndex: number; previousSession: string; glob: string; handled: OutputOffsets },
  ): Promise<ProcessResult> {
    const live = this.profile.liveInput;
    const mapper = this.profile.mapper({ processIndex, previousSession });
    const errorTail: string[] = [];
    const keepTail = (line: string) => {
      errorTail.push(line);
      if (errorTail.length > ERROR_TAIL_LINES) errorTail.shift();
    };
    let turnEnd: TurnEnd | undefined;

    const write = (message: string) => {
      if (proc.stdin?.writable) proc.stdin.write(this.profile.stdinLine!(message));
    };
    proc.stdin?.on('error', () => undefined);
    const forward = live
      ? setInterval(() => {
          for (const message of ctx.inbox.drain()) write(message);
        }, INBOX_POLL_MS)
      : undefined;

    const onStdout = (line: string) => {
      if (!line.trim()) return;
      let event: unknown;
      try {
        event = JSON.parse(line);
      } catch {
        ctx.emit({ kind: 'log', level: 'info', text: line });
        return;
      }
      if (!event || typeof event !== 'object' || Array.isArray(event))
        return ctx.emit({ kind: 'log', level: 'info', text: line });
      const mapped = mapper.map(event as Record<string, unknown>);
      for (const e of mapped.events) {
        ctx.emit(e);
        // A CLI may report why it fails as an error event on stdout and say nothing on stderr (Gemini does).
        if (e.kind === 'log' && e.level === 'error') keepTail(e.text);
      }
      const call = mapped.events.findLast((e) => e.kind === 'tool_call');
      const holds = call && this.profile.sessionHoldsCallIds ? { holds: call.call_id } : {};
      if (call || mapped.turnEnd) ctx.turn?.({ sessionGlob: glob, ...holds });
      if (!mapped.turnEnd) return;
      turnEnd = mapped.turnEnd;
      if (live) this.afterLiveTurn(proc, turnEnd, event as Record<string, unknown>, pending, ctx, write);
    };
    const onStderr = (line: string) => {
      if (!line.trim()) return;
      keepTail(line);
      ctx.emit({ kind: 'log', level: 'info', text: `${this.profile.name}: ${line}` });
    };
    const stdout = outputLines(proc.stdout, (line, bytes) => {
      onStdout(line);
      handled.stdout += bytes;
    });
    const stderr = outputLines(proc.stderr, (line, bytes) => {
      onStderr(line);
      handled.stderr += bytes;
    });

    const onAbort = () => void proc.kill(KILL_GRACE_MS);
    if (ctx.signal.aborted) onAbort();
    else ctx.signal.addEventListener('abort', onAbort, { once: true });
    try {
      const [exit] = await Promise.all([proc.exited, stdout, stderr]);
      for (const e of mapper.flush()) ctx.emit(e);
      const { code, signal, limit, lost } = exit;
      return { turnEnd, code, signal, limit, ...(lost ? { lost } : {}), errorTail };
    } finally {
      if (forward) clearInterval(forward);
      ctx.signal.removeEventListener('abort', onAbort);
    }
  }

  /**
   * A live CLI finished a turn: send the next queued message or waiting follow-up, or, when the CLI has nothing queued
   * either, end its input so it exits. Messages written before the end are still handled.
   */
  private afterLiveTurn(
    proc: SandboxProcess,
    turnEnd: TurnEnd,
    event: Record<string, unknown>,
    pending: string[],
    ctx: HarnessContext,
    write: (m: string) => void,
  ) {
    if (!turnEnd.ok) {
      proc.stdin?.end();
      return;
    }
    pending.push(...ctx.inbox.drain());
    const next = pending.shift();
    if (next !== undefined) return write(next);
    const queued = typeof event.queued_turn_count === 'number' ? event.queued_turn_count : 0;
    if (queued === 0) proc.stdin?.end();
  }

  private outcomeOf(result: ProcessResult | undefined, ctx: HarnessContext): HarnessOutcome {
    const name = this.profile.name;
    if (ctx.signal.aborted) return { state: 'ERROR', message: 'cancelled' };
    if (!result) return { state: 'SUCCEEDED', message: 'Nothing to do' };
    if (result.limit)
      return {
        state: 'ERROR',
        message: `The run exceeded its ${result.limit} limit`,
        errorCode: 'resource_unavailable',
      };
    if (result.turnEnd?.ok)
      return { state: 'SUCCEEDED', message: clip(result.turnEnd.message || `${name} finished`) };
    if (result.turnEnd) return { state: 'FAILED', message: clip(result.turnEnd.message) };
    const how = result.signal ? `signal ${result.signal}` : `code ${result.code}`;
    const detail = result.errorTail.slice(-3).join(' | ');
    return {
      state: 'FAILED',
      message: clip(
        `The ${name} CLI exited with ${how} before finishing its turn${detail ? `: ${detail}` : ''}`,
      ),
    };
  }
}
