import type { RunEvent } from '@conveyor/run-events';
import type { OutputOffsets, RunSandbox, SandboxProcess } from '../sandbox/run-sandbox';
import type { FollowupInbox } from './followup-inbox';

/** How the agent reaches its model: the run's model proxy, as seen from inside the sandbox (docs/harnesses.md). */
export interface ModelAccess {
  /** Base URL per provider wire protocol, as the CLIs' own base-URL variables expect them. */
  baseUrls: { anthropic: string; openai: string; gemini: string };
  /** Per-run token the CLI sends as its API key; the proxy swaps it for the real key, which never enters the sandbox. */
  token: string;
  /** The model as the provider names it. */
  model: string;
  reasoningLevel?: string;
}

/**
 * An agent CLI's session as an execution left it: the session file, by its path relative to the run's HOME. The
 * platform keeps it with the run so that the next execution, on any runner, resumes the session (docs/harnesses.md).
 */
export interface SessionFile {
  path: string;
  content: Buffer;
}

export interface HarnessInput {
  runId: string;
  execution: number;
  prompt: string;
  /** Messages to handle after the prompt (queued follow-ups, or the one that started this execution). */
  followups: string[];
  config: Record<string, unknown>;
  mode: string;
  /** A debug agent in a failed run's retained session. */
  debugSession: boolean;
  /** The workspace as seen inside the sandbox. */
  workspaceDir: string;
  /** Run-scoped API key for harness support (report-artifact) and, for judge runs, scores; '' when none. */
  runApiKey?: string;
  /** Public REST API base URL (ending in /v1) to call with runApiKey. */
  apiBaseUrl?: string;
  /** Instructions of the run's skill (its SKILL.md body), resolved at creation; '' or absent when none. */
  skillInstructions?: string;
  /** Files written under `attachments/` of the workspace (safe base names). */
  attachments?: string[];
  /** Set when the harness drives a model through the platform's model proxy. */
  modelAccess?: ModelAccess;
  /** The session an earlier execution of the run left, to resume when this workspace does not hold it. */
  session?: SessionFile;
  /**
   * The workspace was restored from a checkpoint of a lost agent: continue the session it holds with `followups`;
   * never start a new one (the run would silently start again from scratch).
   */
  resumeOnly?: boolean;
}

/** What the workspace must hold for a checkpoint to be a turn's: the agent's session file, with the turn in it. */
export interface TurnMark {
  /** Shell glob of the agent's session file inside the sandbox. */
  sessionGlob: string;
  /** Text the session file holds once the turn is written to it (the step's call ID). */
  holds?: string;
}

export interface HarnessContext {
  /** Records what the agent does: messages, tool steps, artifacts, usage. */
  emit(event: RunEvent): void;
  /** Follow-ups that arrive while the harness runs. */
  inbox: FollowupInbox;
  /** Aborted when the run is cancelled; the harness must stop promptly. */
  signal: AbortSignal;
  /** Where every process of the run executes; nothing is spawned outside it. */
  sandbox: RunSandbox;
  /** The allow-listed environment every process of the run starts from (see sandbox/run-environment.ts). */
  env: Record<string, string>;
  /** Marks a phase on the execution's trace (the agent's process started), once per phase. */
  mark?(phase: string): void;
  /**
   * Told when the agent finished a model turn (a step requested, or a message answered): its session file and the
   * workspace are where a lost agent resumes from (execution/turn-checkpoints.ts).
   */
  turn?(mark?: TurnMark): void;
  /**
   * Told when the agent's process started durable (it outlives this runner process; docs/run-lifecycle.md).
   * `handled`: how far its output has been turned into events, moved by the harness once each line's events are
   * emitted; a restarted runner reads on from there.
   */
  durable?(agent: { processIndex: number; proc: SandboxProcess; handled: OutputOffsets }): void;
}

/** The agent's durable process as a runner process left it: what the next one takes back (`Harness.resume`). */
export interface DurableAgent {
  /** Which of the execution's agent processes it is. */
  processIndex: number;
  /** How far its output was turned into events. */
  offsets: OutputOffsets;
}

/**
 * `transcript`: the execution's raw transcript when the agent keeps its own (a CLI's session file), else the events.
 * `session`: the agent's session for a later execution to resume, when it keeps one.
 */
export type HarnessOutcome = (
  | { state: 'SUCCEEDED'; message?: string }
  | { state: 'FAILED' | 'ERROR' | 'BLOCKED'; message: string; errorCode?: string }
) & { transcript?: Buffer; session?: SessionFile };

/** Thrown from `prepare` to fail the run during environment setup (the run can then get a debug session). */
export class SetupFailure extends Error {}

/** An agent harness: prepares its part of the environment, then runs the agent to an outcome. */
export interface Harness {
  /**
   * Its agent's launch makes the workspace's directories (workspace.ts, workspaceDirs): with nothing to run before
   * the agent, the runner does not make them first (one exec fewer before the agent's first model request).
   */
  readonly laysOutWorkspace?: boolean;
  prepare(input: HarnessInput): Promise<void>;
  run(input: HarnessInput, ctx: HarnessContext): Promise<HarnessOutcome>;
  /**
   * Takes back the agent's durable process a previous runner process started (`ctx.sandbox.attachDurable`) and
   * drives the execution on to its outcome as `run` would have. Harnesses whose agent runs in the runner process
   * (demo) have none: their runs cannot outlive it.
   */
  resume?(input: HarnessInput, ctx: HarnessContext, agent: DurableAgent): Promise<HarnessOutcome>;
}
