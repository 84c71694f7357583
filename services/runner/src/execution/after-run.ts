import { repositoryDirectory, type EnvironmentSpec } from '../environment-setup';
import type { SessionFile } from '../harness/harness';
import { reportFileArtifact } from '../harness-support-client';
import type { OrchestratorLink } from '../orchestrator-link';
import { pushWorkToBranches } from '../run-branch-push';
import type { RunSandbox } from '../sandbox/run-sandbox';
import { collectWorkspacePatch, MAX_PATCH_BYTES } from '../workspace-changes';
import type { Completion, ExecutionContext, RunReporter } from './execution-context';
import type { HarnessRun } from './harness-drive';

/** CompleteRun carries the session beside the transcript; the orchestrator takes gRPC messages up to 8 MiB. */
export const MAX_SESSION_BYTES = 4 * 1024 * 1024;

/** The after-run work's ports: the orchestrator (branch pushes) and harness support (the patch artifact). */
export interface AfterRunPorts {
  link: Pick<OrchestratorLink, 'call'>;
  reportFile: typeof reportFileArtifact;
}

/**
 * After the harness: the transcript and session kept (redacted), the workspace's changes recorded as a patch and
 * pushed where the environment asks; the completion the execution reports. A run whose work could not be pushed
 * where it was asked to go has failed, though its patch is recorded.
 */
export async function finishWork(
  ctx: ExecutionContext,
  ports: AfterRunPorts,
  sandbox: RunSandbox,
  environment: EnvironmentSpec,
  { outcome, env }: HarnessRun,
): Promise<Completion> {
  const { reporter, assignment } = ctx;
  const transcript = outcome.transcript && reporter.redactor.buffer(outcome.transcript);
  const session = keptSession(outcome.session, reporter);
  if (ctx.signal.aborted) return { state: 'CANCELLED', message: 'Cancelled', transcript, session };
  const debug = assignment.debug_session;
  const changed = debug ? undefined : await recordChanges(ctx, ports, sandbox, env, environment);
  const pushFailure =
    debug || changed === false
      ? undefined
      : await pushWorkToBranches(ports.link, ctx.target, sandbox, env, environment, reporter);
  ctx.trace.mark('after_run_done');
  if (pushFailure && outcome.state === 'SUCCEEDED')
    return { state: 'FAILED', ...pushFailure, transcript, session };
  if (outcome.state === 'SUCCEEDED') {
    const message = outcome.message ?? 'Run completed';
    return {
      state: 'SUCCEEDED',
      message: changed === false ? `${message} (the agent changed no files)` : message,
      transcript,
      session,
    };
  }
  return {
    state: outcome.state,
    message: outcome.message,
    errorCode: outcome.errorCode,
    transcript,
    session,
  };
}

/** The session to keep for the next execution, redacted; one too large for CompleteRun is dropped, and the log says so. */
function keptSession(session: SessionFile | undefined, reporter: RunReporter): SessionFile | undefined {
  if (!session) return undefined;
  if (session.content.length > MAX_SESSION_BYTES) {
    reporter.emit({
      kind: 'log',
      level: 'warn',
      text: `The agent's session (${session.content.length} bytes) is over ${MAX_SESSION_BYTES} bytes and is not kept; a follow-up after the end starts a new session`,
    });
    return undefined;
  }
  return { path: session.path, content: reporter.redactor.buffer(session.content) };
}

/**
 * Records the changes the execution made to the environment's repositories as a FILE artifact (a patch computed in
 * the sandbox). Returns whether anything changed; undefined when there is nothing to compare or it could not tell.
 */
async function recordChanges(
  ctx: ExecutionContext,
  ports: AfterRunPorts,
  sandbox: RunSandbox,
  env: Record<string, string>,
  environment: EnvironmentSpec,
): Promise<boolean | undefined> {
  const { assignment, reporter } = ctx;
  const dirs = environment.repositories.map(repositoryDirectory);
  if (dirs.length === 0) return undefined;
  const note = (level: 'info' | 'warn', text: string) => reporter.emit({ kind: 'log', level, text });
  try {
    const changes = await collectWorkspacePatch(sandbox, env, dirs);
    if ('tooLarge' in changes) {
      note(
        'warn',
        `The workspace's changes (a ${changes.bytes}-byte patch) exceed the ${MAX_PATCH_BYTES}-byte artifact limit and were not recorded`,
      );
      return true;
    }
    if (changes.files === 0) {
      note('info', 'The agent changed no files in the repositories');
      return false;
    }
    const filepath = `conveyor-run-${assignment.run_id}-${assignment.execution}.patch`;
    const content = reporter.redactor.buffer(changes.patch);
    const description = `${changes.files} file(s) changed in execution ${assignment.execution}`;
    await ports.reportFile(
      { apiBaseUrl: assignment.api_base_url, runApiKey: assignment.run_api_key },
      { filepath, mimeType: 'text/x-diff', title: 'Workspace changes', description, content },
    );
    note('info', `Recorded the workspace's changes as ${filepath}: ${description}`);
    return true;
  } catch (err) {
    note('warn', `Could not record the workspace's changes: ${(err as Error).message}`);
    return undefined;
  }
}
