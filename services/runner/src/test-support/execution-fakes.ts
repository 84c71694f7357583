import { PassThrough } from 'node:stream';
import { createLogger } from '@conveyor/logger';
import type { RunAssignment__Output } from '@conveyor/proto';
import type { RunEvent } from '@conveyor/run-events';
import type { EventReporter } from '../event-reporter';
import type { Completion, ExecutionContext } from '../execution/execution-context';
import { RunTrace } from '../execution/run-trace';
import { FollowupInbox } from '../harness/followup-inbox';
import type {
  RunSandbox,
  SandboxBackend,
  SandboxExecOptions,
  SandboxProcess,
  SandboxUsage,
} from '../sandbox/run-sandbox';
import { SecretRedactor } from '../secret-redactor';

/** Fakes of the executor parts' ports, for their unit tests (the parts' int tests use the real ones). */

export function fakeAssignment(over: Partial<RunAssignment__Output> = {}): RunAssignment__Output {
  return {
    run_id: 'run-1',
    execution: 1,
    prompt: 'do it',
    followups: [],
    config_json: '{}',
    harness: 'demo',
    mode: 'normal',
    attachments: [],
    run_api_key: 'cvy_run_key',
    team_id: 'team-1',
    debug_session: false,
    environment_json: '{}',
    skill_instructions: '',
    api_base_url: '',
    session: null,
    completion_takes_events: false,
    trace: null,
    pending_followups: [],
    ...over,
  };
}

/** An adopted run's assignment (its second execution), as the adoption and lease records keep it. */
export const adoptedAssignment = (): RunAssignment__Output => fakeAssignment({ execution: 2 });

/** An event reporter with every event acknowledged, as an adoption record reads it. */
export const settledReporter = (): Pick<EventReporter, 'unacknowledged' | 'writeAheadTo'> => ({
  unacknowledged: () => ({ events_json: [], first_event: 1 }),
  writeAheadTo: () => undefined,
});

/** An execution context recording what it reports and what halted it. */
export function fakeContext(over: Partial<RunAssignment__Output> = {}) {
  const events: RunEvent[] = [];
  const halts: Completion[] = [];
  const abort = new AbortController();
  const redactor = new SecretRedactor();
  const ctx: ExecutionContext = {
    assignment: fakeAssignment(over),
    target: { run_id: over.run_id ?? 'run-1', execution: over.execution ?? 1, runner_id: 'runner-1' },
    log: createLogger({ service: 'runner-test', level: 'silent' }),
    reporter: {
      emit: (event: RunEvent) => void events.push(redactor.json(event)),
      flush: async () => undefined,
      redactor,
    },
    inbox: new FollowupInbox(),
    signal: abort.signal,
    halt: (completion) => {
      halts.push(completion);
      abort.abort();
    },
    trace: new RunTrace(),
  };
  return { ctx, events, halts, abort };
}

/** A process that prints `stdout` and exits with `code` at once. */
export function finishedProcess(code: number, stdout = ''): SandboxProcess {
  const out = new PassThrough();
  const err = new PassThrough();
  out.end(stdout);
  err.end();
  return {
    stdin: null,
    stdout: out,
    stderr: err,
    // After its output has been read, as a real process's exit is reported after its pipes close.
    exited: new Promise((resolve) => setImmediate(() => resolve({ code, signal: null }))),
    kill: async () => undefined,
  };
}

/** A sandbox whose commands exit as `exitCode` says (0 by default), recording them and its destruction. */
export function fakeSandbox(options: { exitCode?: (argv: string[]) => number; usage?: SandboxUsage } = {}) {
  const commands: string[][] = [];
  const destroyed: Array<{ keepWorkspace?: boolean }> = [];
  const sandbox: RunSandbox = {
    workspaceDir: '/workspace',
    endpointUrl: (name) => `http://127.0.0.1:41000/${name}`,
    exec: (exec: SandboxExecOptions) => {
      commands.push(exec.argv);
      return finishedProcess(options.exitCode?.(exec.argv) ?? 0);
    },
    destroy: async (opts = {}) => {
      destroyed.push(opts);
      return options.usage ?? { diskBytes: 4096 };
    },
  };
  return { sandbox, commands, destroyed };
}

/** A backend handing out `sandbox` (or failing to), recording the policies and the workspaces discarded. */
export function fakeBackend(prepared: RunSandbox | Error) {
  const policies: Array<Parameters<SandboxBackend['prepare']>[0]> = [];
  const discarded: string[] = [];
  const backend: Pick<SandboxBackend, 'name' | 'prepare' | 'discardWorkspace'> = {
    name: 'fake',
    prepare: async (policy) => {
      policies.push(policy);
      if (prepared instanceof Error) throw prepared;
      return prepared;
    },
    discardWorkspace: async (runId) => void discarded.push(runId),
  };
  return { backend, policies, discarded };
}
