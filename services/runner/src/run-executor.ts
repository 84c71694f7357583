import type { Logger } from '@conveyor/logger';
import type { RunAssignment__Output } from '@conveyor/proto';
import type { RunJob } from '@conveyor/run-events';
import { contextFromCarrier, inSpan } from '@conveyor/tracing';
import { environmentSchema } from './environment-setup';
import { finishWork } from './execution/after-run';
import type { Completion, ExecutionContext } from './execution/execution-context';
import type { AdoptionRecord, AdoptionRecords } from './execution/adoption-records';
import { driveHarness, resumeHarness } from './execution/harness-drive';
import { openModelAccess } from './execution/model-access';
import { claimExecution, ExecutionLifecycle } from './execution/run-lifecycle';
import { RunTrace } from './execution/run-trace';
import { RunWorkspaces } from './execution/run-workspace';
import { harnessCrashMessage } from './harness-crash';
import { harnessFor } from './harness/harness-registry';
import { reportFileArtifact } from './harness-support-client';
import type { OrchestratorLink } from './orchestrator-link';
import type { ExecutorOptions } from './run-executor-options';
import { RunDetached } from './sandbox/run-sandbox';

type ExecutionRecord = ReturnType<AdoptionRecords['execution']>;

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
  execute(
    job: RunJob,
    stopSignal: AbortSignal,
    hooks: { claimed?: RunAssignment__Output; onAgentStarted?: () => void } = {},
  ): Promise<string> {
    // The run's span continues the trace its job carries (API request or webhook delivery → outbox → queue); every
    // orchestrator call, phase and model request of the execution is under it.
    return inSpan('run', () => this.executeJob(job, stopSignal, hooks), {
      parent: contextFromCarrier(job.trace),
      attributes: { 'conveyor.run_id': job.runId, 'conveyor.execution': job.execution },
    });
  }

  private async executeJob(
    job: RunJob,
    stopSignal: AbortSignal,
    { claimed, onAgentStarted }: { claimed?: RunAssignment__Output; onAgentStarted?: () => void },
  ): Promise<string> {
    const log = this.logger.child({ runId: job.runId, execution: job.execution });
    const assignment = await claimExecution(this.link, job, this.options.runnerId, log, claimed);
    if (!assignment) return 'skipped';
    const trace = new RunTrace(undefined, { harness_started: onAgentStarted });
    const lifecycle = new ExecutionLifecycle(this.link, assignment, this.options, log, stopSignal, trace);
    const record = this.options.adoptionRecords?.execution(this.options.runnerId, assignment);
    return this.settle(lifecycle, record, () => this.drive(lifecycle.context, record));
  }

  /**
   * Takes back an execution a previous runner process left running (docs/run-lifecycle.md "Runner restarts"): under
   * the runner identity the orchestrator knows it by, with the model token its agent holds, its sandbox reopened and
   * its agent's output read on from the recorded offsets. No claim: the run is still this runner's.
   */
  async adopt(record: AdoptionRecord, stopSignal: AbortSignal): Promise<string> {
    const { assignment, runnerId } = record;
    const log = this.logger.child({
      runId: assignment.run_id,
      execution: assignment.execution,
      adopted: true,
    });
    const settings = { ...this.options, runnerId, adopted: true };
    const lifecycle = new ExecutionLifecycle(this.link, assignment, settings, log, stopSignal);
    const kept = this.options.adoptionRecords?.execution(runnerId, assignment);
    return this.settle(lifecycle, kept, () => this.resume(lifecycle.context, record, kept));
  }

  /** Reports the execution's end — unless the runner stopped and left it to its next process. */
  private async settle(
    lifecycle: ExecutionLifecycle,
    record: ExecutionRecord | undefined,
    drive: () => Promise<Completion>,
  ): Promise<string> {
    let completion: Completion;
    try {
      completion = await drive();
    } catch (err) {
      if (err instanceof RunDetached) {
        await record?.close(true);
        await lifecycle.detach();
        return 'detached';
      }
      lifecycle.context.log.error({ err }, 'harness crashed');
      completion = { state: 'ERROR', message: harnessCrashMessage(err), errorCode: 'internal_error' };
    }
    const outcome = await lifecycle.finish(completion);
    await record?.close(false);
    return outcome;
  }

  /** Opens the run's model access (when its harness needs one), then drives it; the access always closes with it. */
  private async drive(ctx: ExecutionContext, record: ExecutionRecord | undefined): Promise<Completion> {
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
        const onDurable =
          record &&
          ((agent: Parameters<ExecutionRecord['started']>[0]) => record.started(agent, grant?.token));
        const driven = await driveHarness(ctx, harness, grant, sandbox, environment, onDurable);
        if ('failed' in driven) return driven.failed;
        const ports = { link: this.link, reportFile: reportFileArtifact };
        return finishWork(ctx, ports, sandbox, environment, driven.ran);
      });
    } finally {
      grant?.close();
    }
  }

  /** The harness on the agent's durable process, in the reopened sandbox; the run's after-work and end as usual. */
  private async resume(
    ctx: ExecutionContext,
    record: AdoptionRecord,
    kept: ExecutionRecord | undefined,
  ): Promise<Completion> {
    const { assignment } = ctx;
    const harness = harnessFor(assignment.harness, this.options.harnessCommands);
    const resume = harness.resume?.bind(harness);
    if (!resume)
      return {
        state: 'ERROR',
        message: `The runner restarted, and the ${assignment.harness} harness cannot take a run back`,
        errorCode: 'resource_unavailable',
      };
    const access = await openModelAccess(ctx, this.link, this.options.modelProxy, harness, record.modelToken);
    if ('refused' in access) return access.refused;
    const { grant } = access;
    try {
      const environment = environmentSchema.parse(JSON.parse(assignment.environment_json || '{}'));
      return await this.workspaces.reopen(ctx, environment, grant, async (sandbox) => {
        const ran = await resumeHarness(ctx, resume, grant, sandbox, record.agent, (agent) =>
          kept?.started(agent, grant?.token),
        );
        return finishWork(
          ctx,
          { link: this.link, reportFile: reportFileArtifact },
          sandbox,
          environment,
          ran,
        );
      });
    } finally {
      grant?.close();
    }
  }
}
