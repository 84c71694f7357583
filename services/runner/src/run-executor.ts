import type { Logger } from '@conveyor/logger';
import type { RunAssignment__Output } from '@conveyor/proto';
import type { RunJob } from '@conveyor/run-events';
import { contextFromCarrier, inSpan } from '@conveyor/tracing';
import { environmentSchema, type EnvironmentSpec, type FetchRepository } from './environment-setup';
import { finishWork } from './execution/after-run';
import type { Completion, ExecutionContext } from './execution/execution-context';
import type { AdoptionRecord, AdoptionRecords } from './execution/adoption-records';
import { untilAcknowledged } from './acknowledged-call';
import type { NumberedEvents } from './event-reporter';
import { resumptionAfterLoss } from './execution/agent-resumption';
import {
  driveHarness,
  resumeFromCheckpoint,
  resumeHarness,
  type HarnessRun,
  type OnDurable,
} from './execution/harness-drive';
import { openModelAccess } from './execution/model-access';
import { claimExecution, ExecutionLifecycle } from './execution/run-lifecycle';
import { RunTrace } from './execution/run-trace';
import { RunWorkspaces, type WithinOptions } from './execution/run-workspace';
import { harnessCrashMessage } from './harness-crash';
import { harnessFor } from './harness/harness-registry';
import { reportFileArtifact } from './harness-support-client';
import type { OrchestratorLink } from './orchestrator-link';
import type { ExecutorOptions } from './run-executor-options';
import type { RunCheckpoint } from './execution/turn-checkpoints';
import type { Harness } from './harness/harness';
import type { ModelAccessGrant } from './model-proxy/model-access-grant';
import { RunDetached, SandboxLost, type RunSandbox } from './sandbox/run-sandbox';

type ExecutionRecord = ReturnType<AdoptionRecords['execution']>;

/**
 * One execution of one run, in its parts around one execution context: claim it and keep it (lifecycle), open its
 * model access, prepare its sandbox and workspace (PENDING), drive the harness in it (INPROGRESS), record and push
 * its work, and report the outcome with the transcript.
 */
export class RunExecutor {
  private readonly workspaces: RunWorkspaces;
  private readonly ports: Parameters<typeof finishWork>[1];

  constructor(
    private readonly link: OrchestratorLink,
    private readonly options: ExecutorOptions,
    private readonly logger: Logger,
  ) {
    this.workspaces = new RunWorkspaces(options.sandbox, options);
    this.ports = { link, reportFile: reportFileArtifact };
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
    const record = this.options.adoptionRecords?.execution(
      this.options.runnerId,
      assignment,
      lifecycle.reporter,
      lifecycle.context.inbox,
    );
    const checkpoint = this.options.checkpoints?.of(assignment.run_id);
    // An earlier execution's checkpoint is not this one's to go on from.
    await checkpoint?.drop();
    return this.settle(lifecycle, record, checkpoint, () =>
      this.drive(lifecycle.context, record, checkpoint),
    );
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
    const adopted: NumberedEvents | 'unnumbered' = record.events ?? 'unnumbered';
    const settings = { ...this.options, runnerId, adopted, adoptedFollowups: record.followups ?? [] };
    const lifecycle = new ExecutionLifecycle(this.link, assignment, settings, log, stopSignal);
    const kept = this.options.adoptionRecords?.execution(
      runnerId,
      assignment,
      lifecycle.reporter,
      lifecycle.context.inbox,
    );
    const checkpoint = this.options.checkpoints?.of(assignment.run_id);
    return this.settle(lifecycle, kept, checkpoint, () =>
      this.resume(lifecycle.context, record, kept, checkpoint),
    );
  }

  /**
   * Ends an execution a previous runner process left that this one cannot take back (docs/run-lifecycle.md "Runner
   * restarts"): ERROR naming why, sent until the orchestrator acknowledges it.
   */
  async refuse(target: ExecutionContext['target'], message: string): Promise<void> {
    const log = this.logger.child({ runId: target.run_id, execution: target.execution });
    const request = {
      ...target,
      state: 'ERROR',
      message,
      error_code: 'resource_unavailable',
      setup_failed: false,
      transcript: Buffer.alloc(0),
      events_json: [],
      first_event: 0,
    };
    await untilAcknowledged(
      'run completion',
      () => this.link.call('CompleteRun', request),
      { giveUpAfterMs: this.options.limits.wallClockMs },
      log,
    );
  }

  /** Reports the execution's end — unless the runner stopped and left it to its next process. */
  private async settle(
    lifecycle: ExecutionLifecycle,
    record: ExecutionRecord | undefined,
    checkpoint: RunCheckpoint | undefined,
    drive: () => Promise<Completion>,
  ): Promise<string> {
    let completion: Completion;
    try {
      completion = await drive();
    } catch (err) {
      if (err instanceof RunDetached && lifecycle.takenOver) {
        // Its record and agent are the adopter's now: nothing of it is written, released or killed here.
        await lifecycle.detach();
        return 'taken over';
      }
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
    await checkpoint?.drop();
    return outcome;
  }

  /**
   * Drives `first`; when the agent is lost with its sandbox (`SandboxLost`), the run goes on from its last turn's
   * checkpoint in a new sandbox, as often as RUN_MAX_RESUMPTIONS allows, or ends ERROR naming why
   * (docs/run-lifecycle.md "Lost agents").
   */
  private async resuming(
    ctx: ExecutionContext,
    run: {
      harness: Harness;
      grant: ModelAccessGrant | undefined;
      environment: EnvironmentSpec;
      checkpoint: RunCheckpoint | undefined;
      onDurable: OnDurable | undefined;
    },
    first: () => Promise<Completion>,
  ): Promise<Completion> {
    const { harness, grant, environment, checkpoint, onDurable } = run;
    let attempt = first;
    for (;;) {
      try {
        return await attempt();
      } catch (err) {
        if (!(err instanceof SandboxLost)) throw err;
        const cause = err.message;
        ctx.log.warn({ cause }, "the run's agent was lost with its sandbox");
        if (!checkpoint)
          return {
            state: 'ERROR',
            message: `The run's agent was lost (${cause}); this runner keeps no checkpoints to go on from`,
            errorCode: 'resource_unavailable',
          };
        const decided = await resumptionAfterLoss(ctx, checkpoint, cause, this.options.maxResumptions);
        if ('completion' in decided) return decided.completion;
        const checkpointing = { checkpoint, turns: decided.resume.turn };
        attempt = () =>
          this.inNewSandbox(
            ctx,
            environment,
            grant,
            (sandbox) => resumeFromCheckpoint(ctx, harness, grant, sandbox, checkpointing, cause, onDurable),
            { resumeFromCheckpoint: true },
          );
      }
    }
  }

  /** In a new sandbox of the execution: the harness driven by `drive`, then the run's after-work. */
  private inNewSandbox(
    ctx: ExecutionContext,
    environment: EnvironmentSpec,
    grant: ModelAccessGrant | undefined,
    drive: (sandbox: RunSandbox) => Promise<{ ran: HarnessRun } | { failed: Completion }>,
    options: WithinOptions,
  ): Promise<Completion> {
    return this.workspaces.within(
      ctx,
      environment,
      grant,
      async (sandbox) => {
        const driven = await drive(sandbox);
        if ('failed' in driven) return driven.failed;
        return finishWork(ctx, this.ports, sandbox, environment, driven.ran);
      },
      options,
    );
  }

  /** Opens the run's model access (when its harness needs one), then drives it; the access always closes with it. */
  private async drive(
    ctx: ExecutionContext,
    record: ExecutionRecord | undefined,
    checkpoint: RunCheckpoint | undefined,
  ): Promise<Completion> {
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
      const onDurable: OnDurable | undefined =
        record && ((agent, sandbox) => record.started(agent, grant?.token, sandbox.reopenSecret));
      const checkpointing = checkpoint && { checkpoint, turns: 0 };
      const fetchRepository: FetchRepository = (repository) =>
        this.link.call('FetchRunRepository', { ...ctx.target, repository }, 120_000);
      const run = { harness, grant, environment, checkpoint, onDurable };
      return await this.resuming(ctx, run, () =>
        this.inNewSandbox(
          ctx,
          environment,
          grant,
          (sandbox) =>
            driveHarness(
              ctx,
              harness,
              grant,
              sandbox,
              environment,
              fetchRepository,
              onDurable,
              checkpointing,
            ),
          { launchLaysOut: harness.laysOutWorkspace === true },
        ),
      );
    } finally {
      grant?.close();
    }
  }

  /** The harness on the agent's durable process, in the reopened sandbox; the run's after-work and end as usual. */
  private async resume(
    ctx: ExecutionContext,
    record: AdoptionRecord,
    kept: ExecutionRecord | undefined,
    checkpoint: RunCheckpoint | undefined,
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
      const onDurable: OnDurable = (agent, sandbox) =>
        kept?.started(agent, grant?.token, sandbox.reopenSecret);
      const turns = (await checkpoint?.latest().catch(() => undefined))?.turn ?? 0;
      const checkpointing = checkpoint && { checkpoint, turns };
      const run = { harness, grant, environment, checkpoint, onDurable };
      return await this.resuming(ctx, run, () =>
        this.workspaces.reopen(
          ctx,
          environment,
          grant,
          async (sandbox) => {
            const ran = await resumeHarness(
              ctx,
              resume,
              grant,
              sandbox,
              record.agent,
              onDurable,
              checkpointing,
            );
            return finishWork(ctx, this.ports, sandbox, environment, ran);
          },
          record.reopenSecret,
        ),
      );
    } finally {
      grant?.close();
    }
  }
}
