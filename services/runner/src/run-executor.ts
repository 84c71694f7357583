import type { Logger } from '@conveyor/logger';
import type { RunAssignment__Output } from '@conveyor/proto';
import type { RunJob } from '@conveyor/run-events';
import { environmentSchema } from './environment-setup';
import { finishWork } from './execution/after-run';
import type { Completion, ExecutionContext } from './execution/execution-context';
import { driveHarness } from './execution/harness-drive';
import { openModelAccess } from './execution/model-access';
import { claimExecution, ExecutionLifecycle } from './execution/run-lifecycle';
import { RunWorkspaces } from './execution/run-workspace';
import { harnessCrashMessage } from './harness-crash';
import { harnessFor } from './harness/harness-registry';
import { reportFileArtifact } from './harness-support-client';
import type { OrchestratorLink } from './orchestrator-link';
import type { ExecutorOptions } from './run-executor-options';

/**
 * One execution of one run, in its parts around one execution context: claim it and keep it (lifecycle), open its
 * model access, prepare its sandbox and workspace (PENDING), drive the harness in it (INPROGRESS), record and push
 * its work, and report the outcome with the transcript.
 */
export class RunExecutor {
  private readonly workspaces: RunWorkspaces;

  constructor(
    private readonly link: OrchestratorLink,
    private readonly options: ExecutorOptions,
    private readonly logger: Logger,
  ) {
    this.workspaces = new RunWorkspaces(options.sandbox, options);
  }

  /**
   * Returns the execution's outcome (lower-case run state), or `skipped` when the run was not claimable.
   * `claimed`: an assignment already claimed for this runner (self-hosted workers get theirs over their stream).
   */
  async execute(job: RunJob, stopSignal: AbortSignal, claimed?: RunAssignment__Output): Promise<string> {
    const log = this.logger.child({ runId: job.runId, execution: job.execution });
    const assignment = await claimExecution(this.link, job, this.options.runnerId, log, claimed);
    if (!assignment) return 'skipped';
    const lifecycle = new ExecutionLifecycle(this.link, assignment, this.options, log, stopSignal);
    let completion: Completion;
    try {
      completion = await this.drive(lifecycle.context);
    } catch (err) {
      log.error({ err }, 'harness crashed');
      completion = { state: 'ERROR', message: harnessCrashMessage(err), errorCode: 'internal_error' };
    }
    return lifecycle.finish(completion);
  }

  /** Opens the run's model access (when its harness needs one), then drives it; the access always closes with it. */
  private async drive(ctx: ExecutionContext): Promise<Completion> {
    const { assignment } = ctx;
    if (!assignment.debug_session)
      ctx.reporter.emit({ kind: 'state_changed', from: 'CLAIMED', to: 'PENDING' });
    const harness = harnessFor(assignment.harness, this.options.harnessCommands);
    const access = await openModelAccess(ctx, this.link, this.options.modelProxy, harness);
    if ('refused' in access) return access.refused;
    const { grant } = access;
    ctx.trace.mark('model_access_open');
    try {
      const environment = environmentSchema.parse(JSON.parse(assignment.environment_json || '{}'));
      return await this.workspaces.within(ctx, environment, grant, async (sandbox) => {
        const driven = await driveHarness(ctx, harness, grant, sandbox, environment);
        if ('failed' in driven) return driven.failed;
        const ports = { link: this.link, reportFile: reportFileArtifact };
        return finishWork(ctx, ports, sandbox, environment, driven.ran);
      });
    } finally {
      grant?.close();
    }
  }
}
