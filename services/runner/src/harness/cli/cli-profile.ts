import type { CliName } from '@conveyor/harnesses';
import type { RunEvent } from '@conveyor/run-events';
import type { ModelAccess } from '../harness';
import type { McpServer } from './mcp-servers';

/** Everything a profile needs to lay out and start its CLI for one run (paths as seen inside the sandbox). */
export interface CliSetup {
  runId: string;
  workspaceDir: string;
  /** The run's private HOME: the CLI's settings, skills and session files; outside every repository checkout. */
  home: string;
  model: ModelAccess;
  mcpServers: McpServer[];
  /** The run's skill, installed where the CLI discovers skills. */
  skill?: { name: string; description: string; instructions: string };
}

/** What the CLI reported when one of its turns ended. */
export interface TurnEnd {
  ok: boolean;
  /** The agent's final text, or the error. */
  message: string;
}

/** Turns the CLI's own JSON-lines stream into run events; one mapper per CLI process. */
export interface CliEventMapper {
  map(event: Record<string, unknown>): { events: RunEvent[]; turnEnd?: TurnEnd };
  /** Events still held back when the stream ends (e.g. streamed text not yet closed by another event). */
  flush(): RunEvent[];
}

/**
 * What differs between the agent CLIs; the one driver (cli-harness.ts) does the rest. A profile is pure: it
 * describes files, environment and arguments, and never touches the host or the sandbox itself.
 */
export interface CliProfile {
  readonly name: CliName;
  /** Follow-ups can be written into the running process's stdin (else they resume the session after it exits). */
  readonly liveInput: boolean;
  /** The CLI's executable and leading arguments, from the runner's own installation. */
  command(): [string, ...string[]];
  /** Files (absolute paths inside the sandbox) to write before the CLI starts: settings, MCP servers, skills. */
  files(setup: CliSetup): Array<{ path: string; content: string }>;
  /** Variables on top of the run's base environment: base URL and token, HOME-relative config dirs, no telemetry. */
  env(setup: CliSetup): Record<string, string>;
  /** Arguments after the CLI's executable, for a new session or one resuming the session file at `session`. */
  args(setup: CliSetup, message: string, session: string | undefined): string[];
  /** A message as one stdin line, for CLIs with live input. */
  stdinLine?(message: string): string;
  /**
   * The session file records a step under the call ID its mapper reports (Claude Code's `tool_use` id): a turn's
   * checkpoint then waits for the session to hold the step, else only for the file to exist.
   */
  readonly sessionHoldsCallIds?: boolean;
  /** Shell glob (inside the sandbox) matching the session file(s) of this run; the newest is the session. */
  sessionGlob(setup: CliSetup): string;
  /**
   * Where a session file kept from an earlier execution (`saved`, relative to HOME) goes in this one, when its path
   * depends on the workspace's path, which another runner may mount elsewhere. Absent: the same path.
   */
  restorePath?(setup: CliSetup, saved: string): string;
  /** A mapper for one process; `previousSession` is the session file as it was before the process started. */
  mapper(context: { processIndex: number; previousSession: string }): CliEventMapper;
}
