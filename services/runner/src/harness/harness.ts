import type { RunEvent } from '@conveyor/run-events';
import type { FollowupInbox } from './followup-inbox';

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
  workspaceDir: string;
  /** Run-scoped API key for harness support (report-artifact) and, for judge runs, scores; '' when none. */
  runApiKey?: string;
  /** Public REST API base URL (ending in /v1) to call with runApiKey. */
  apiBaseUrl?: string;
  /** Instructions of the run's skill (its SKILL.md body), resolved at creation; '' or absent when none. */
  skillInstructions?: string;
}

export interface HarnessContext {
  /** Records what the agent does: messages, tool steps, artifacts, usage. */
  emit(event: RunEvent): void;
  /** Follow-ups that arrive while the harness runs. */
  inbox: FollowupInbox;
  /** Aborted when the run is cancelled; the harness must stop promptly. */
  signal: AbortSignal;
}

export type HarnessOutcome =
  | { state: 'SUCCEEDED'; message?: string }
  | { state: 'FAILED' | 'ERROR' | 'BLOCKED'; message: string; errorCode?: string };

/** Thrown from `prepare` to fail the run during environment setup (the run can then get a debug session). */
export class SetupFailure extends Error {}

/** An agent harness: prepares its part of the environment, then runs the agent to an outcome. */
export interface Harness {
  prepare(input: HarnessInput): Promise<void>;
  run(input: HarnessInput, ctx: HarnessContext): Promise<HarnessOutcome>;
}
