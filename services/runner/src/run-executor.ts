import { AppError } from '@conveyor/errors';
import type { Logger } from '@conveyor/logger';
import type { RunAssignment__Output, RunnerControl__Output } from '@conveyor/proto';
import type { RunEvent, RunJob } from '@conveyor/run-events';
import { environmentSchema, repositoryHosts, setUpEnvironment, type EnvironmentSpec } from './environment-setup';
import { EventReporter } from './event-reporter';
import { FollowupInbox } from './harness/followup-inbox';
import { SetupFailure, type HarnessInput, type HarnessOutcome } from './harness/harness';
import { harnessFor } from './harness/harness-registry';
import type { RunnerConfig } from './config';
import type { OrchestratorLink } from './orchestrator-link';
import { baseRunEnvironment } from './sandbox/run-environment';
import { sandboxLimits } from './sandbox/sandbox-config';
import { SandboxUnavailable, type RunSandbox, type SandboxBackend, type SandboxLimits } from './sandbox/run-sandbox';
import { modelAccessFor, modelEndpoint } from './model-access';
import { harnessSupportEndpoint, harnessSupportHosts, insideApiBaseUrl, limitCompletion } from './sandbox/run-policy';
import { prepareWorkspace, removeWorkspace, safeFileName } from './workspace';

export interface ExecutorOptions {
  runnerId: string;
  workspaceRoot: string;
  heartbeatIntervalMs: number;
  harnessCommands: Record<string, string>;
  sandbox: SandboxBackend;
  /** Hosts every run may reach, before the environment's own. */
  allowedHosts: string[];
  limits: SandboxLimits;
  /** How long a workspace kept after a failed setup waits for a debug session (the orchestrator's debug window). */
  debugRetentionMs: number;
  /** Where runs reach their model (the model proxy), from the runner's side; unset = no model access. */
  modelEndpoint?: string;
}

/** The settings the runner and the self-hosted worker program share. */
type ExecutorSettings = Pick<RunnerConfig, 'WORKSPACE_ROOT' | 'HEARTBEAT_INTERVAL_MS' | 'HARNESS_COMMANDS' | 'SANDBOX_ALLOWED_HOSTS' | 'RUN_TIMEOUT_MS' | 'RUN_MAX_PROCESSES' | 'RUN_MEMORY_MB' | 'RUN_DISK_MB' | 'FAILURE_SESSION_RETENTION_MINUTES'> &
  Partial<Pick<RunnerConfig, 'MODEL_ENDPOINT'>>;

export function executorOptions(config: ExecutorSettings, runnerId: string, sandbox: SandboxBackend): ExecutorOptions {
  return {
    runnerId,
    workspaceRoot: config.WORKSPACE_ROOT,
    heartbeatIntervalMs: config.HEARTBEAT_INTERVAL_MS,
    harnessCommands: config.HARNESS_COMMANDS,
    sandbox,
    allowedHosts: config.SANDBOX_ALLOWED_HOSTS,
    limits: sandboxLimits(config),
    debugRetentionMs: config.FAILURE_SESSION_RETENTION_MINUTES * 60_000,
    modelEndpoint: config.MODEL_ENDPOINT,
  };
}

type SetupStep = Extract<RunEvent, { kind: 'setup_step' }>;

const setupStepReporter =
  (reporter: EventReporter) =>
  (step: SetupStep['step'], status: SetupStep['status'], detail?: string): void =>
    reporter.emit({ kind: 'setup_step', step, status, ...(detail ? { detail } : {}) });

type Completion = { state: HarnessOutcome['state'] | 'CANCELLED'; message: string; errorCode?: string; setupFailed?: boolean; transcript?: Buffer };

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
      assignment = claimed ?? await this.link.call('ClaimRun', { run_id: job.runId, execution: job.execution, runner_id: this.options.runnerId });
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
    const onControl = (control: RunnerControl__Output) => {
      if (control.cancel_requested && !abort.signal.aborted) {
        log.info('cancellation requested; stopping harness');
        abort.abort();
      }
      for (const f of control.followups) inbox.push(f.message);
    };
    const onLinkError = (err: unknown) => {
      // The orchestrator says we no longer hold the run (cancelled and re-executed, or swept as lost): stop.
      if (err instanceof AppError && err.code === 'conflict') abort.abort();
      else log.warn({ err }, 'orchestrator call failed; will retry');
    };
    const reporter = new EventReporter(this.link, target, onControl, onLinkError);
    const heartbeat = setInterval(() => {
      this.link.call('Heartbeat', rpcTarget, 5000).then(onControl, onLinkError);
    }, this.options.heartbeatIntervalMs);

    let completion: Completion;
    try {
      completion = await this.drive(assignment, reporter, inbox, abort.signal);
    } catch (err) {
      log.error({ err }, 'harness crashed');
      completion = { state: 'ERROR', message: 'The agent harness crashed', errorCode: 'internal_error' };
    } finally {
      clearInterval(heartbeat);
      stopSignal.removeEventListener('abort', onStop);
    }
    await reporter.close();
    if (stopSignal.aborted) {
      completion = { state: 'ERROR', message: 'The runner shut down while the run was in progress', errorCode: 'resource_unavailable' };
    } else if (abort.signal.aborted) {
      completion = { state: 'CANCELLED', message: 'Cancelled', transcript: completion.transcript };
    }
    await this.link
      .call('CompleteRun', {
        ...rpcTarget,
        state: completion.state,
        message: completion.message,
        error_code: completion.errorCode ?? '',
        setup_failed: completion.setupFailed ?? false,
        transcript: completion.transcript ?? reporter.transcriptBytes(),
      })
      .catch((err: unknown) => log.warn({ err }, 'could not report completion'));
    log.info({ state: completion.state }, 'run execution finished');
    return completion.state.toLowerCase();
  }

  /**
   * Prepares the workspace and the run's sandbox, drives the harness inside it, and always tears the sandbox down,
   * reporting the disk the workspace used and deleting it (unless a failed setup keeps it for the debug window).
   */
  private async drive(assignment: RunAssignment__Output, reporter: EventReporter, inbox: FollowupInbox, signal: AbortSignal): Promise<Completion> {
    if (!assignment.debug_session) reporter.emit({ kind: 'state_changed', from: 'CLAIMED', to: 'PENDING' });
    const step = setupStepReporter(reporter);
    const environment = environmentSchema.parse(JSON.parse(assignment.environment_json || '{}'));

    step('workspace', 'started');
    const workspaceDir = await prepareWorkspace(this.options.workspaceRoot, assignment.run_id, assignment.attachments.map((a) => ({ file_name: a.file_name, data: Buffer.from(a.data) })));
    let sandbox: RunSandbox;
    this.active.add(assignment.run_id);
    try {
      sandbox = await this.options.sandbox.prepare({
        runId: assignment.run_id,
        ...(environment.docker_image ? { image: environment.docker_image } : {}),
        workspaceDir,
        allowedHosts: [...this.options.allowedHosts, ...repositoryHosts(environment), ...harnessSupportHosts(assignment.api_base_url)],
        endpoints: [...modelEndpoint(this.options.modelEndpoint), ...harnessSupportEndpoint(assignment.api_base_url)],
        limits: this.options.limits,
        onEgress: ({ host, port, allowed, reason }) => {
          if (!allowed) reporter.emit({ kind: 'log', level: 'warn', text: `sandbox: connection to ${host}:${port} refused (${reason})` });
        },
      });
    } catch (err) {
      if (!(err instanceof SandboxUnavailable)) throw err;
      step('workspace', 'failed', `sandbox unavailable: ${err.message}`);
      this.active.delete(assignment.run_id);
      await removeWorkspace(this.options.workspaceRoot, assignment.run_id);
      return { state: 'ERROR', message: 'The run could not be isolated, so it was not started', errorCode: 'resource_unavailable' };
    }
    step('workspace', 'succeeded', `${assignment.attachments.length} attachment(s), sandbox ${this.options.sandbox.name}`);
    let completion: Completion | undefined;
    try {
      completion = await this.driveInSandbox(assignment, environment, sandbox, reporter, inbox, signal);
    } finally {
      const usage = await sandbox.destroy();
      // A failed setup keeps its workspace for the debug session (docs/run-lifecycle.md); the debug execution deletes it.
      const keep = completion?.setupFailed === true && !assignment.debug_session;
      this.active.delete(assignment.run_id);
      if (keep) this.removeAfterDebugWindow(assignment.run_id);
      else await removeWorkspace(this.options.workspaceRoot, assignment.run_id);
      reporter.emit({ kind: 'log', level: 'info', text: `workspace used ${usage.diskBytes} bytes; ${keep ? 'kept for the debug window' : 'deleted'}` });
      if (usage.limit && completion && completion.state !== 'CANCELLED') completion = limitCompletion(usage.limit, this.options.limits, completion.transcript);
      if (usage.limit) reporter.emit({ kind: 'log', level: 'error', text: `sandbox: ${completion?.message ?? usage.limit}` });
    }
    return completion;
  }

  /** A workspace kept for a debug session goes when the window closes, unless a debug execution is using it then. */
  private removeAfterDebugWindow(runId: string): void {
    setTimeout(() => {
      if (!this.active.has(runId)) void removeWorkspace(this.options.workspaceRoot, runId).catch(() => undefined);
    }, this.options.debugRetentionMs).unref();
  }

  private async driveInSandbox(
    assignment: RunAssignment__Output,
    environment: EnvironmentSpec,
    sandbox: RunSandbox,
    reporter: EventReporter,
    inbox: FollowupInbox,
    signal: AbortSignal,
  ): Promise<Completion> {
    const debug = assignment.debug_session;
    const harness = harnessFor(assignment.harness, this.options.harnessCommands);
    const step = setupStepReporter(reporter);
    const apiBaseUrl = insideApiBaseUrl(sandbox, assignment.api_base_url);
    const env = baseRunEnvironment({ runId: assignment.run_id, workspaceDir: sandbox.workspaceDir, runApiKey: assignment.run_api_key, apiBaseUrl });

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
      };
      input.modelAccess = modelAccessFor(assignment.harness, input.config, sandbox, modelEndpoint(this.options.modelEndpoint));
      if (!debug) {
        if (environment.repositories.length + environment.setup_commands.length > 0) {
          step('setup_commands', 'started');
          await setUpEnvironment(environment, sandbox, env, signal, (detail) => reporter.emit({ kind: 'log', level: 'info', text: detail }));
          step('setup_commands', 'succeeded');
        }
      }
      current = 'harness_start';
      step('harness_start', 'started', assignment.harness);
      await harness.prepare(input);
      step('harness_start', 'succeeded');
    } catch (err) {
      if (!(err instanceof SetupFailure)) throw err;
      step(current, 'failed', err.message);
      return { state: 'FAILED', message: err.message, errorCode: 'environment_setup_failed', setupFailed: true };
    }

    if (!debug) reporter.emit({ kind: 'state_changed', from: 'PENDING', to: 'INPROGRESS' });
    await reporter.flush();
    const outcome = await harness.run(input, { emit: (e) => reporter.emit(e), inbox, signal, sandbox, env });
    const transcript = outcome.transcript;
    if (signal.aborted) return { state: 'CANCELLED', message: 'Cancelled', transcript };
    return outcome.state === 'SUCCEEDED'
      ? { state: 'SUCCEEDED', message: outcome.message ?? 'Run completed', transcript }
      : { state: outcome.state, message: outcome.message, errorCode: outcome.errorCode, transcript };
  }
}
