/**
 * What runners and workers exchange with the orchestrator about one execution, as the domain reads and answers it.
 * `grpc/handlers/runner-handlers.ts` and the worker endpoint carry these over the wire (RunnerService messages have
 * the same fields, so a proto change that breaks one shows up there, not here).
 */
import type { TraceCarrier } from '@conveyor/tracing';

/** One execution of a run, as the runner holding it names it: every runner call carries it. */
export interface RunnerExecution {
  run_id: string;
  execution: number;
  runner_id: string;
}

/** An agent CLI's session file, kept between executions (docs/harnesses.md). */
export interface HarnessSession {
  path: string;
  content: Buffer;
}

/** Everything a runner needs to execute a claimed run. */
export interface RunAssignment {
  run_id: string;
  execution: number;
  prompt: string;
  followups: string[];
  config_json: string;
  harness: string;
  mode: string;
  attachments: Array<{ file_name: string; mime_type: string; data: Buffer }>;
  run_api_key: string;
  team_id: string;
  debug_session: boolean;
  environment_json: string;
  skill_instructions: string;
  /** Set by the worker endpoint: the API a self-hosted worker's agent reaches. */
  api_base_url?: string;
  session?: HarnessSession | null;
  /** Always true from this orchestrator: CompleteRun records the events it carries (the runner may skip its last batch). */
  completion_takes_events: boolean;
  /** Set by the worker dispatch: the trace context the self-hosted worker's execution continues. */
  trace?: TraceCarrier;
  /** `followups` with their IDs, left pending, for a runner that acknowledges follow-ups (claim-run.ts). */
  pending_followups: Array<{ followup_id: string; message: string }>;
}

/** What the runner must act on now: cancellation, and follow-ups for the live harness. */
export interface RunnerControl {
  cancel_requested: boolean;
  followups: Array<{ followup_id: string; message: string }>;
}

/** The end of an execution as the runner reports it. */
export interface ExecutionOutcome extends RunnerExecution {
  state: string;
  message: string;
  error_code: string;
  setup_failed: boolean;
  transcript: Buffer;
  session: HarnessSession | null;
  /** The execution's last events, recorded before the outcome (ReportEvents' format); empty when it sent them itself. */
  events_json: string[];
  /** events_json's first position in the execution (ReportEvents' `first_event`; 0: not numbered). */
  first_event?: number;
  /** The follow-ups the runner acknowledges (unset: an older runner, whose batch marks them delivered). */
  followups?: { acknowledged_ids: string[] } | null;
}

/** The run's model key and budget for its execution; the key stays in the runner's model proxy. */
export interface HarnessCredential {
  provider: string;
  api_key: string;
  secret_name: string;
  models: string[];
  input_usd_per_million_tokens: number;
  output_usd_per_million_tokens: number;
  budget_usd: number;
  spent_usd: number;
}

/** The run's changes to push to one of its environment's repositories (by index): a git bundle and/or a patch. */
export interface BranchPush extends RunnerExecution {
  repository: number;
  base_commit: string;
  bundle: Buffer;
  patch: Buffer;
}

export interface PushedBranch {
  branch: string;
  commit: string;
  repository_url: string;
  /** Set when the repository asks for a pull request: opened, or why not (the branch is pushed either way). */
  pull_request?: PullRequestOutcome;
}

/** A pull request opened from the pushed branch (`url`), or the stable code and message of why it was not. */
export interface PullRequestOutcome {
  url: string;
  number: number;
  base: string;
  error_code: string;
  error_message: string;
}
