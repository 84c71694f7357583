import { AppError } from '@conveyor/errors';
import type { Logger } from '@conveyor/logger';
import type { RunAssignment__Output } from '@conveyor/proto';
import type { RunEvent, RunJob } from '@conveyor/run-events';
import {
  environmentSchema,
  repositoryDirectory,
  repositoryHosts,
  type EnvironmentSpec,
} from './environment-setup';
import { prepareEnvironment, snapshotRef } from './environment-snapshots';
import { EventReporter } from './event-reporter';
import { harnessCrashMessage } from './harness-crash';
import { RunControl } from './run-control';
import { CommandHarness } from './harness/command-harness';
import { FollowupInbox } from './harness/followup-inbox';
import {
  SetupFailure,
  type Harness,
  type HarnessInput,
  type HarnessOutcome,
  type SessionFile,
} from './harness/harness';
import { harnessFor } from './harness/harness-registry';
import { reportFileArtifact } from './harness-support-client';
import { ModelAccessGrant, modelHarnessType } from './model-proxy/model-access-grant';
import type { OrchestratorLink } from './orchestrator-link';
import type { ExecutorOptions } from './run-executor-options';
import { baseRunEnvironment } from './sandbox/run-environment';
import { SandboxUnavailable, type RunSandbox } from './sandbox/run-sandbox';
import {
  harnessSupportEndpoint,
  harnessSupportHosts,
  insideApiBaseUrl,
  limitCompletion,
} from './sandbox/run-policy';
import { pushWorkToBranches } from './run-branch-push';
import { collectWorkspacePatch, MAX_PATCH_BYTES } from './workspace-changes';
import { layOutWorkspace, safeFileName } from './workspace';

type SetupStep = Extract<RunEvent, { kind: 'setup_step' }>;

/** CompleteRun carries the session beside the transcript; the orchestrator takes gRPC messages up to 8 MiB. */
const MAX_SESSION_BYTES = 4 * 1024 * 1024;

const setupStepReporter =
  (reporter: EventReporter) =>
  (step: SetupStep['step'], status: SetupStep['status'], detail?: string): void =>
    reporter.emit({ kind: 'setup_step', step, status, ...(detail ? { detail } : {}) });

type Completion = {
  state: HarnessOutcome['state'] | 'CANCELLED';
  message: string;
  errorCode?: string;
  setupFailed?: boolean;
  transcript?: Buffer;
  session?: SessionFile;
};

/** Ends the execution early with this outcome (the budget ran out, the key was refused), rather than as cancelled. */
type Halt = (completion: Completion) => void;

const overBudget = (spentUsd: number, budgetUsd: number): Completion => ({
  state: 'FAILED',
  message: `The run exceeded its budget of $${budgetUsd.toFixed(4)} (spent $${spentUsd.toFixed(4)})`,
  errorCode: 'budget_exceeded',
});

/**
 * One execution of one run: claim it, prepare the workspace and environment (PENDING), run the harness
 * (INPROGRESS) while heartbeating for cancellation and follow-ups, and report the outcome with the transcript.
 */
export class RunExecutor {
  /** Runs with a sandbox on this executor now (their workspaces are in use). */
  private readonly active = new Set<string>();

  constructor(
    private readonly link: OrchestratorLink,
    private readonly options: ExecutorOptions,
    private readonly logger: Logger,
  ) {}

  /** `claimed`: an assignment already claimed for this runner (self-hosted workers get theirs over their stream). */
  /** Returns the execution's outcome (lower-case run state), or `skipped` when the run was not claimable. */
  async execute(job: RunJob, stopSignal: AbortSignal, claimed?: RunAssignment__Output): Promise<string> {
    const log = this.logger.child({ runId: job.runId, execution: job.execution });
    let assignment: RunAssignment__Output;
    try {
      assignment =
        claimed ??
        (await this.link.call('ClaimRun', {
          run_id: job.runId,
          execution: job.execution,
          runner_id: this.options.runnerId,
        }));
    } catch (err) {
      if (err instanceof AppError && err.code === 'conflict') {
        log.info({ reason: err.message }, 'run not claimable; skipping job');
        return 'skipped';
      }
      throw err;
    }
    log.info({ harness: assignment.harness, debug: assignment.debug_session }, 'run claimed');

    const abort = new AbortController();
    const onStop = () => abort.abort();
    stopSignal.addEventListener('abort', onStop, { once: true });
    const inbox = new FollowupInbox();
    const target = { runId: job.runId, execution: job.execution, runnerId: this.options.runnerId };
    const rpcTarget = { run_id: job.runId, execution: job.execution, runner_id: this.options.runnerId };
    const control = new RunControl(log, abort, inbox);
    const reporter = new EventReporter(this.link, target, control.answered, control.failed);
    const heartbeat = setInterval(() => {
      this.link.call('Heartbeat', rpcTarget, 5000).then(control.answered, control.failed);
    }, this.options.heartbeatIntervalMs);

    let halted: Completion | undefined;
    const halt: Halt = (outcome) => {
      halted ??= outcome;
      log.info({ errorCode: outcome.errorCode }, 'stopping harness');
      abort.abort();
    };
    let completion: Completion;
    try {
      completion = await this.drive(assignment, reporter, inbox, abort.signal, halt);
    } catch (err) {
      log.error({ err }, 'harness crashed');
      completion = { state: 'ERROR', message: harnessCrashMessage(err), errorCode: 'internal_error' };
    } finally {
      clearInterval(heartbeat);
      stopSignal.removeEventListener('abort', onStop);
    }
    await reporter.close();
    if (stopSignal.aborted) {
      // The stop's own cause when it has one (the sandbox was lost), else an ordinary shutdown.
      completion = {
        state: 'ERROR',
        message:
          stopSignal.reason instanceof SandboxUnavailable
            ? stopSignal.reason.message
            : 'The runner shut down while the run was in progress',
        errorCode: 'resource_unavailable',
      };
    } else if (halted) {
      completion = { ...halted, transcript: completion.transcript, session: completion.session };
    } else if (abort.signal.aborted) {
      completion = {
        state: 'CANCELLED',
        message: 'Cancelled',
        transcript: completion.transcript,
        session: completion.session,
      };
    }
    await this.link
      .call('CompleteRun', {
        ...rpcTarget,
        state: completion.state,
        message: completion.message,
        error_code: completion.errorCode ?? '',
        setup_failed: completion.setupFailed ?? false,
        transcript: completion.transcript ?? reporter.transcriptBytes(),
        ...(completion.session ? { session: completion.session } : {}),
      })
      .catch((err: unknown) => log.warn({ err }, 'could not report completion'));
    log.info({ state: completion.state }, 'run execution finished');
    return completion.state.toLowerCase();
  }

  /** Opens the run's model access (when its harness needs one), then drives it; the access always closes with it. */
  private async drive(
    assignment: RunAssignment__Output,
    reporter: EventReporter,
    inbox: FollowupInbox,
    signal: AbortSignal,
    halt: Halt,
  ): Promise<Completion> {
    if (!assignment.debug_session) reporter.emit({ kind: 'state_changed', from: 'CLAIMED', to: 'PENDING' });
    const step = setupStepReporter(reporter);
    const harness = harnessFor(assignment.harness, this.options.harnessCommands);

    let grant: ModelAccessGrant | undefined;
    try {
      grant = await this.grantModelAccess(assignment, harness, reporter, halt);
    } catch (err) {
      if (!(err instanceof AppError) || err.code === 'conflict') throw err;
      // No credential, or one that cannot be used: the run fails before anything of it starts.
      step('harness_start', 'failed', err.message);
      return { state: 'FAILED', message: err.message, errorCode: err.code };
    }
    try {
      if (grant?.overBudget) return overBudget(grant.credential.spent_usd, grant.credential.budget_usd);
      return await this.driveInWorkspace(assignment, harness, grant, reporter, inbox, signal);
    } finally {
      grant?.close();
    }
  }

  /**
   * Registers the run with the model proxy when its harness drives a model CLI. An operator's command adapter may run
   * without a credential (it may bring its own); a built-in CLI harness may not.
   */
  private async grantModelAccess(
    assignment: RunAssignment__Output,
    harness: Harness,
    reporter: EventReporter,
    halt: Halt,
  ): Promise<ModelAccessGrant | undefined> {
    const proxy = this.options.modelProxy;
    if (!proxy || !modelHarnessType(assignment.harness)) return undefined;
    const target = {
      run_id: assignment.run_id,
      execution: assignment.execution,
      runner_id: this.options.runnerId,
    };
    try {
      const grant = await ModelAccessGrant.open(this.link, proxy, target, {
        onUsage: (usage) => reporter.emit({ kind: 'usage', ...usage }),
        onBudgetExceeded: (spent, budget) => halt(overBudget(spent, budget)),
        // A CLI may retry or wait for input after a refused key; the run cannot go on, so it ends here.
        onKeyRejected: (status, secret) =>
          halt({
            state: 'FAILED',
            message: `The model provider rejected the key in team secret "${secret}" (HTTP ${status})`,
            errorCode: 'external_authentication_required',
          }),
        onRefused: (refusal) => reporter.emit({ kind: 'egress_refused', ...refusal }),
      });
      reporter.redactor.add(grant.credential.api_key);
      return grant;
    } catch (err) {
      if (
        harness instanceof CommandHarness &&
        err instanceof AppError &&
        err.code === 'integration_not_configured'
      )
        return undefined;
      throw err;
    }
  }

  /**
   * Prepares the workspace and the run's sandbox, drives the harness inside it, and always tears the sandbox down,
   * reporting the disk the workspace used and deleting it (unless a failed setup keeps it for the debug window).
   */
  private async driveInWorkspace(
    assignment: RunAssignment__Output,
    harness: Harness,
    grant: ModelAccessGrant | undefined,
    reporter: EventReporter,
    inbox: FollowupInbox,
    signal: AbortSignal,
  ): Promise<Completion> {
    const step = setupStepReporter(reporter);
    const environment = environmentSchema.parse(JSON.parse(assignment.environment_json || '{}'));

    step('workspace', 'started');
    let sandbox: RunSandbox;
    this.active.add(assignment.run_id);
    try {
      sandbox = await this.options.sandbox.prepare({
        runId: assignment.run_id,
        ...(environment.docker_image ? { image: environment.docker_image } : {}),
        allowedHosts: [
          ...this.options.allowedHosts,
          ...environment.allowed_hosts,
          ...repositoryHosts(environment),
          ...harnessSupportHosts(assignment.api_base_url),
        ],
        endpoints: [...(grant ? [grant.endpoint] : []), ...harnessSupportEndpoint(assignment.api_base_url)],
        limits: this.options.limits,
        snapshot: snapshotRef(assignment.team_id, environment, assignment.debug_session),
        onEgress: ({ host, port, allowed, reason }) => {
          if (!allowed)
            reporter.emit({ kind: 'egress_refused', host, port, reason: reason ?? 'not allowed' });
        },
      });
    } catch (err) {
      this.active.delete(assignment.run_id);
      if (!(err instanceof SandboxUnavailable)) throw err;
      step('workspace', 'failed', `sandbox unavailable: ${err.message}`);
      return {
        state: 'ERROR',
        message: `The run could not be isolated, so it was not started: ${err.message}`,
        errorCode: 'resource_unavailable',
      };
    }
    let completion: Completion | undefined;
    try {
      const env = baseRunEnvironment({ runId: assignment.run_id, workspaceDir: sandbox.workspaceDir });
      const attachments = assignment.attachments.map((a) => ({
        file_name: a.file_name,
        data: Buffer.from(a.data),
      }));
      try {
        await layOutWorkspace(sandbox, env, attachments);
      } catch (err) {
        step('workspace', 'failed', (err as Error).message);
        return (completion = {
          state: 'FAILED',
          message: `The workspace could not be laid out: ${(err as Error).message}`,
          errorCode: 'environment_setup_failed',
        });
      }
      step(
        'workspace',
        'succeeded',
        `${attachments.length} attachment(s), sandbox ${this.options.sandbox.name}`,
      );
      completion = await this.driveInSandbox(
        assignment,
        environment,
        harness,
        grant,
        sandbox,
        reporter,
        inbox,
        signal,
      );
    } finally {
      // A failed setup keeps its workspace for the debug session (docs/run-lifecycle.md); the debug execution deletes it.
      // One a limit ended is not kept (the backend deletes it): no debug session follows a limit.
      const usage = await sandbox.destroy({
        keepWorkspace: completion?.setupFailed === true && !assignment.debug_session,
      });
      const keep = completion?.setupFailed === true && !assignment.debug_session && !usage.limit;
      // The limit decides the outcome (not a setup failure: no debug window); the transcript and the kept CLI session
      // survive it, so a follow-up can still resume the session.
      if (usage.limit && completion && completion.state !== 'CANCELLED') {
        const { transcript, session } = completion;
        completion = {
          ...limitCompletion(usage.limit, this.options.limits),
          ...(transcript ? { transcript } : {}),
          ...(session ? { session } : {}),
        };
      }
      this.active.delete(assignment.run_id);
      if (keep) this.removeAfterDebugWindow(assignment.run_id);
      reporter.emit({
        kind: 'workspace_released',
        disk_bytes: usage.diskBytes,
        kept_for_debug: keep,
        ...(usage.limit ? { limit: usage.limit } : {}),
      });
    }
    return completion;
  }

  /** A workspace kept for a debug session goes when the window closes, unless a debug execution is using it then. */
  private removeAfterDebugWindow(runId: string): void {
    setTimeout(() => {
      if (!this.active.has(runId)) void this.options.sandbox.discardWorkspace(runId).catch(() => undefined);
    }, this.options.debugRetentionMs).unref();
  }

  private async driveInSandbox(
    assignment: RunAssignment__Output,
    environment: EnvironmentSpec,
    harness: Harness,
    grant: ModelAccessGrant | undefined,
    sandbox: RunSandbox,
    reporter: EventReporter,
    inbox: FollowupInbox,
    signal: AbortSignal,
  ): Promise<Completion> {
    const debug = assignment.debug_session;
    const step = setupStepReporter(reporter);
    const apiBaseUrl = insideApiBaseUrl(sandbox, assignment.api_base_url);
    const env = baseRunEnvironment({
      runId: assignment.run_id,
      workspaceDir: sandbox.workspaceDir,
      runApiKey: assignment.run_api_key,
      apiBaseUrl,
    });

    let input: HarnessInput;
    let current: SetupStep['step'] = 'setup_commands';
    try {
      input = {
        runId: assignment.run_id,
        execution: assignment.execution,
        prompt: assignment.prompt,
        followups: assignment.followups,
        config: JSON.parse(assignment.config_json || '{}') as Record<string, unknown>,
        mode: assignment.mode,
        debugSession: debug,
        workspaceDir: sandbox.workspaceDir,
        runApiKey: assignment.run_api_key,
        apiBaseUrl,
        skillInstructions: assignment.skill_instructions,
        attachments: assignment.attachments.map((a) => safeFileName(a.file_name)),
        ...(assignment.session
          ? { session: { path: assignment.session.path, content: Buffer.from(assignment.session.content) } }
          : {}),
      };
      input.modelAccess = grant?.access(sandbox, input.config);
      if (!debug)
        await prepareEnvironment({
          environment,
          sandbox,
          backend: this.options.sandbox,
          ref: snapshotRef(assignment.team_id, environment, debug),
          capturable: assignment.attachments.length === 0,
          env,
          signal,
          step: (status, detail) => step('setup_commands', status, detail),
          log: (level, text) => reporter.emit({ kind: 'log', level, text }),
        });
      current = 'harness_start';
      step('harness_start', 'started', assignment.harness);
      await harness.prepare(input);
      step('harness_start', 'succeeded');
    } catch (err) {
      if (!(err instanceof SetupFailure)) throw err;
      step(current, 'failed', err.message);
      return {
        state: 'FAILED',
        message: err.message,
        errorCode: 'environment_setup_failed',
        setupFailed: true,
      };
    }

    if (!debug) reporter.emit({ kind: 'state_changed', from: 'PENDING', to: 'INPROGRESS' });
    await reporter.flush();
    // With model access through the proxy, the proxy's metering is the run's usage; the CLI's own count would double it.
    const emit = (event: RunEvent) => (grant && event.kind === 'usage' ? undefined : reporter.emit(event));
    const outcome = await harness.run(input, { emit, inbox, signal, sandbox, env });
    const transcript = outcome.transcript && reporter.redactor.buffer(outcome.transcript);
    const session = this.keptSession(outcome.session, reporter);
    if (signal.aborted) return { state: 'CANCELLED', message: 'Cancelled', transcript, session };
    const changed = debug
      ? undefined
      : await this.recordChanges(assignment, sandbox, env, environment, reporter);
    const pushTarget = {
      run_id: assignment.run_id,
      execution: assignment.execution,
      runner_id: this.options.runnerId,
    };
    const pushFailure =
      debug || changed === false
        ? undefined
        : await pushWorkToBranches(this.link, pushTarget, sandbox, env, environment, reporter);
    // A run whose work could not be pushed where it was asked to go has failed, though its patch is recorded.
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
  private keptSession(session: SessionFile | undefined, reporter: EventReporter): SessionFile | undefined {
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
  private async recordChanges(
    assignment: RunAssignment__Output,
    sandbox: RunSandbox,
    env: Record<string, string>,
    environment: EnvironmentSpec,
    reporter: EventReporter,
  ): Promise<boolean | undefined> {
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
      await reportFileArtifact(
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
}
