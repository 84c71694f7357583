import type { EnvironmentSpec } from '../environment-setup';
import { repositoryHosts } from '../environment-setup';
import type { ModelAccessGrant } from '../model-proxy/model-access-grant';
import { baseRunEnvironment } from '../sandbox/run-environment';
import { harnessSupportEndpoint, harnessSupportHosts, limitCompletion } from './run-policy';
import {
  RunDetached,
  SandboxLost,
  SandboxUnavailable,
  type RunSandbox,
  type SandboxBackend,
  type SandboxLimits,
  type SandboxPolicy,
  type SandboxUsage,
} from '../sandbox/run-sandbox';
import { layOutWorkspace } from '../workspace';
import { setsUp, snapshotRef } from './environment-snapshots';
import { reportStep, type Completion, type ExecutionContext } from './execution-context';

export interface WithinOptions {
  /** Going on from a checkpoint: it is the workspace, not the environment's snapshot. */
  resumeFromCheckpoint?: boolean;
  /**
   * The harness's launch makes the workspace's directories (`Harness.laysOutWorkspace`): when nothing runs in the
   * sandbox before the agent, they are not made by an exec of their own first (time to agent).
   */
  launchLaysOut?: boolean;
}

export interface WorkspaceSettings {
  /** Hosts every run may reach, before the environment's own. */
  allowedHosts: string[];
  limits: SandboxLimits;
  /** How long a workspace kept after a failed setup waits for a debug session. */
  debugRetentionMs: number;
}

/**
 * The runs' workspaces and sandboxes on one executor: each execution's sandbox is prepared with the run's policy, its
 * workspace laid out, and always torn down after — reporting the disk the workspace used and deleting it, unless a
 * failed setup keeps it for the debug window (docs/run-lifecycle.md).
 */
export class RunWorkspaces {
  /** Runs with a sandbox here now (their workspaces are in use). */
  private readonly active = new Set<string>();

  constructor(
    private readonly backend: Pick<SandboxBackend, 'name' | 'prepare' | 'discardWorkspace' | 'reopen'>,
    private readonly settings: WorkspaceSettings,
  ) {}

  /** Runs `drive` in the execution's prepared sandbox; its completion may be overridden by a limit that ended it. */
  async within(
    ctx: ExecutionContext,
    environment: EnvironmentSpec,
    grant: ModelAccessGrant | undefined,
    drive: (sandbox: RunSandbox) => Promise<Completion>,
    { resumeFromCheckpoint = false, launchLaysOut = false }: WithinOptions = {},
  ): Promise<Completion> {
    const { assignment } = ctx;
    const runId = assignment.run_id;
    reportStep(ctx, 'workspace', 'started');
    let sandbox: RunSandbox;
    this.active.add(runId);
    try {
      const policy = this.policyOf(ctx, environment, grant);
      sandbox = await this.backend.prepare(
        resumeFromCheckpoint ? { ...policy, snapshot: undefined, resumeFromCheckpoint } : policy,
      );
    } catch (err) {
      this.active.delete(runId);
      if (!(err instanceof SandboxUnavailable)) throw err;
      reportStep(ctx, 'workspace', 'failed', `sandbox unavailable: ${err.message}`);
      return {
        state: 'ERROR',
        message: `The run could not be isolated, so it was not started: ${err.message}`,
        errorCode: 'resource_unavailable',
      };
    }
    for (const secret of sandbox.secrets ?? []) ctx.reporter.redactor.add(secret);
    ctx.trace.mark('sandbox_ready');
    // Setup (from scratch: a snapshot holds the laid-out workspace) and attachments need the directories before it.
    const deferred =
      launchLaysOut &&
      !resumeFromCheckpoint &&
      assignment.attachments.length === 0 &&
      (!setsUp(environment) || sandbox.startedFrom !== undefined);
    return this.runIn(
      ctx,
      sandbox,
      async () => (await this.layOut(ctx, sandbox, deferred)) ?? (await drive(sandbox)),
    );
  }

  /**
   * Runs `drive` in the sandbox of an execution whose agent outlived the previous runner process, taken back; when
   * the backend cannot (the sandbox is gone), `SandboxLost`: the run goes on from its last turn or ends ERROR naming
   * why — it is never started again from scratch.
   */
  async reopen(
    ctx: ExecutionContext,
    environment: EnvironmentSpec,
    grant: ModelAccessGrant | undefined,
    drive: (sandbox: RunSandbox) => Promise<Completion>,
    reopenSecret?: string,
  ): Promise<Completion> {
    const runId = ctx.assignment.run_id;
    this.active.add(runId);
    let sandbox: RunSandbox;
    try {
      if (!this.backend.reopen) throw new SandboxUnavailable(`the ${this.backend.name} backend keeps no run`);
      sandbox = await this.backend.reopen({ ...this.policyOf(ctx, environment, grant), reopenSecret });
    } catch (err) {
      this.active.delete(runId);
      if (!(err instanceof SandboxUnavailable)) throw err;
      throw new SandboxLost(`the runner restarted and could not take its sandbox back: ${err.message}`);
    }
    return this.runIn(ctx, sandbox, () => drive(sandbox));
  }

  private policyOf(
    ctx: ExecutionContext,
    environment: EnvironmentSpec,
    grant: ModelAccessGrant | undefined,
  ): SandboxPolicy {
    const { assignment } = ctx;
    return {
      runId: assignment.run_id,
      execution: assignment.execution,
      ...(environment.docker_image ? { image: environment.docker_image } : {}),
      allowedHosts: [
        ...this.settings.allowedHosts,
        ...environment.allowed_hosts,
        ...repositoryHosts(environment),
        ...harnessSupportHosts(assignment.api_base_url),
      ],
      endpoints: [...(grant ? [grant.endpoint] : []), ...harnessSupportEndpoint(assignment.api_base_url)],
      limits: this.settings.limits,
      snapshot: snapshotRef(assignment.team_id, environment, assignment.debug_session),
      onEgress: ({ host, port, allowed, reason }) => {
        if (!allowed)
          ctx.reporter.emit({ kind: 'egress_refused', host, port, reason: reason ?? 'not allowed' });
      },
      onWaiting: (why) => reportStep(ctx, 'workspace', 'started', why),
    };
  }

  /**
   * Drives the execution in its sandbox, then releases it; a limit that ended the sandbox decides the outcome. A
   * runner that stops leaves the sandbox as it is (`RunDetached`): its next process takes it back.
   */
  private async runIn(
    ctx: ExecutionContext,
    sandbox: RunSandbox,
    drive: () => Promise<Completion>,
  ): Promise<Completion> {
    let completion: Completion;
    const letGo = () => sandbox.detach?.(true);
    ctx.takenOver?.addEventListener('abort', letGo, { once: true });
    try {
      completion = await drive();
    } catch (err) {
      if (err instanceof RunDetached) this.active.delete(ctx.assignment.run_id);
      else await this.release(ctx, sandbox, false);
      throw err;
    } finally {
      ctx.takenOver?.removeEventListener('abort', letGo);
    }
    const usage = await this.release(ctx, sandbox, completion.setupFailed === true);
    if (completion.state === 'CANCELLED') return completion;
    // A limit, or the sandbox's loss, decides the outcome; the transcript and the kept CLI session survive it, so a
    // follow-up can still resume the session.
    const { transcript, session } = completion;
    const kept = { ...(transcript ? { transcript } : {}), ...(session ? { session } : {}) };
    if (usage.limit) return { ...limitCompletion(usage.limit, this.settings.limits), ...kept };
    if (usage.lost)
      return { state: 'ERROR', message: usage.lost, errorCode: 'resource_unavailable', ...kept };
    return completion;
  }

  /**
   * HOME and the attachments; undefined when laid out, else the run's failure. `deferred`: the agent's launch makes
   * the directories, nothing here runs in the sandbox.
   */
  private async layOut(
    ctx: ExecutionContext,
    sandbox: RunSandbox,
    deferred: boolean,
  ): Promise<Completion | undefined> {
    const { assignment } = ctx;
    const env = baseRunEnvironment({ runId: assignment.run_id, workspaceDir: sandbox.workspaceDir });
    const attachments = assignment.attachments.map((a) => ({
      file_name: a.file_name,
      data: Buffer.from(a.data),
    }));
    try {
      if (!deferred) await layOutWorkspace(sandbox, env, attachments);
    } catch (err) {
      reportStep(ctx, 'workspace', 'failed', (err as Error).message);
      return {
        state: 'FAILED',
        message: `The workspace could not be laid out: ${(err as Error).message}`,
        errorCode: 'environment_setup_failed',
      };
    }
    reportStep(
      ctx,
      'workspace',
      'succeeded',
      `${attachments.length} attachment(s), sandbox ${this.backend.name}`,
    );
    ctx.trace.mark('workspace_ready');
    return undefined;
  }

  /**
   * Destroys the sandbox. A failed setup keeps its workspace for the debug session; the debug execution deletes it.
   * One a limit ended is not kept (the backend deletes it): no debug session follows a limit.
   */
  private async release(
    ctx: ExecutionContext,
    sandbox: RunSandbox,
    setupFailed: boolean,
  ): Promise<SandboxUsage> {
    const { run_id: runId, debug_session: debug } = ctx.assignment;
    const usage = await sandbox.destroy({ keepWorkspace: setupFailed && !debug });
    const keep = setupFailed && !debug && !usage.limit;
    this.active.delete(runId);
    if (keep) this.removeAfterDebugWindow(runId);
    if (usage.lost) ctx.reporter.emit({ kind: 'log', level: 'error', text: usage.lost });
    ctx.reporter.emit({
      kind: 'workspace_released',
      disk_bytes: usage.diskBytes,
      kept_for_debug: keep,
      ...(usage.limit ? { limit: usage.limit } : {}),
    });
    return usage;
  }

  /** A workspace kept for a debug session goes when the window closes, unless a debug execution is using it then. */
  private removeAfterDebugWindow(runId: string): void {
    setTimeout(() => {
      if (!this.active.has(runId)) void this.backend.discardWorkspace(runId).catch(() => undefined);
    }, this.settings.debugRetentionMs).unref();
  }
}
