import { AppError } from '@conveyor/errors';
import type { Logger } from '@conveyor/logger';
import type { RunAssignment__Output } from '@conveyor/proto';
import type { RunJob } from '@conveyor/run-events';
import { untilAcknowledged } from '../acknowledged-call';
import { EventReporter, type NumberedEvents } from '../event-reporter';
import { FollowupInbox, type OfferedFollowup } from '../harness/followup-inbox';
import type { OrchestratorLink } from '../orchestrator-link';
import { RunControl } from '../run-control';
import { SandboxUnavailable } from '../sandbox/run-sandbox';
import type { Completion, ExecutionContext } from './execution-context';
import { RunTrace } from './run-trace';

/** The orchestrator calls an execution's lifecycle makes. */
export type LifecycleLink = Pick<OrchestratorLink, 'call'>;

/**
 * Claims the job's run for this runner (or takes an assignment already claimed: self-hosted workers get theirs over
 * their stream). Undefined when the run is not claimable (cancelled, or another runner holds it).
 */
export async function claimExecution(
  link: LifecycleLink,
  job: RunJob,
  runnerId: string,
  log: Logger,
  claimed?: RunAssignment__Output,
): Promise<RunAssignment__Output | undefined> {
  try {
    const assignment =
      claimed ??
      (await link.call('ClaimRun', {
        run_id: job.runId,
        execution: job.execution,
        runner_id: runnerId,
        acknowledges_followups: true,
      }));
    log.info({ harness: assignment.harness, debug: assignment.debug_session }, 'run claimed');
    return assignment;
  } catch (err) {
    if (err instanceof AppError && err.code === 'conflict') {
      log.info({ reason: err.message }, 'run not claimable; skipping job');
      return undefined;
    }
    throw err;
  }
}

/**
 * A claimed execution's lifecycle: its context, heartbeats (cancellation and follow-ups come back on them and on the
 * event batches) while it runs, and the completion reported at its end — a halt's outcome, CANCELLED, or the
 * runner's stop overriding what the harness said.
 */
export class ExecutionLifecycle {
  readonly context: ExecutionContext;
  /** The execution's events; the adoption record keeps what is unacknowledged of them. */
  readonly reporter: EventReporter;
  private readonly abort = new AbortController();
  private readonly heartbeat: NodeJS.Timeout;
  private readonly onStop = () => this.abort.abort();
  /** Aborted when another replica took the execution over (settings.leased). */
  private readonly taken = new AbortController();
  private halted: Completion | undefined;
  /** The follow-ups the harness has (durably): the completion acknowledges them too, and leaves the rest pending. */
  private readonly acknowledgement: RunControl['acknowledgement'];

  constructor(
    private readonly link: LifecycleLink,
    assignment: RunAssignment__Output,
    private readonly settings: {
      runnerId: string;
      heartbeatIntervalMs: number;
      /** The run's own time limit: a completion the orchestrator cannot take is retried for as long. */
      limits: { wallClockMs: number };
      /** Taken back from a previous runner process: where its events stand (EventReporter's `from`). */
      adopted?: NumberedEvents | 'unnumbered';
      /** Taken back: the follow-ups the previous process had handed to the harness (its adoption record's). */
      adoptedFollowups?: readonly OfferedFollowup[];
      /** The execution's record is its lease (Kubernetes): another replica may take it over, agent and all. */
      leased?: boolean;
    },
    private readonly log: Logger,
    private readonly stopSignal: AbortSignal,
    trace = new RunTrace(),
  ) {
    const target = {
      run_id: assignment.run_id,
      execution: assignment.execution,
      runner_id: settings.runnerId,
    };
    // A record written before claims handed follow-ups over with their IDs has none (`?? []`).
    const inbox = new FollowupInbox(
      settings.adoptedFollowups,
      assignment.pending_followups ?? [],
      settings.adopted !== undefined,
    );
    const control = new RunControl(
      log,
      this.abort,
      inbox,
      settings.leased ? () => this.taken.abort() : undefined,
    );
    this.reporter = new EventReporter(
      link,
      { runId: target.run_id, execution: target.execution, runnerId: target.runner_id },
      control.answered,
      control.failed,
      undefined,
      settings.adopted,
    );
    this.reporter.acknowledgeFollowups(control.acknowledgement);
    this.acknowledgement = control.acknowledgement;
    stopSignal.addEventListener('abort', this.onStop, { once: true });
    this.heartbeat = setInterval(() => {
      // A batch answered within the interval did a heartbeat's work (lastHeartbeatAt, cancellation, follow-ups).
      if (Date.now() - this.reporter.answeredAt < settings.heartbeatIntervalMs) return;
      link
        .call('Heartbeat', { ...target, followups: control.acknowledgement() }, 5000)
        .then(control.answered, control.failed);
    }, settings.heartbeatIntervalMs);
    this.context = {
      assignment,
      target,
      log,
      reporter: this.reporter,
      inbox,
      signal: this.abort.signal,
      ...(settings.leased ? { takenOver: this.taken.signal } : {}),
      halt: (completion) => {
        this.halted ??= completion;
        log.info({ errorCode: completion.errorCode }, 'stopping harness');
        this.abort.abort();
      },
      trace,
    };
    trace.mark('claimed');
  }

  /**
   * Reports the execution's end and returns its outcome as the job's result (lower-case run state). The completion
   * is sent until the orchestrator acknowledges it (acknowledged-call.ts), for at most the run's own time limit;
   * heartbeats go on meanwhile, so the run is not taken for lost while its outcome waits.
   */
  async finish(driven: Completion): Promise<string> {
    this.stopSignal.removeEventListener('abort', this.onStop);
    // The last batch rides on the completion when the orchestrator records it there (it says so at claim). Its
    // write-ahead (the adoption record) is acknowledged first, or the completion is not sent (`report` throws).
    const rest: Promise<NumberedEvents> = this.context.assignment.completion_takes_events
      ? this.reporter.takeRest()
      : this.reporter.close().then(() => ({ events_json: [], first_event: 0 }));
    await rest.catch(() => undefined);
    const completion = this.settle(driven);
    const report = async () => {
      const request = {
        ...this.context.target,
        ...(await rest),
        state: completion.state,
        message: completion.message,
        error_code: completion.errorCode ?? '',
        setup_failed: completion.setupFailed ?? false,
        transcript: completion.transcript ?? this.reporter.transcriptBytes(),
        followups: this.acknowledgement(),
        ...(completion.session ? { session: completion.session } : {}),
      };
      await untilAcknowledged(
        'run completion',
        () => this.link.call('CompleteRun', request),
        { giveUpAfterMs: this.settings.limits.wallClockMs },
        this.log,
      );
    };
    await report()
      .catch((err: unknown) => this.log.warn({ err }, 'could not report completion'))
      .finally(() => clearInterval(this.heartbeat));
    const { trace } = this.context;
    trace.mark('completed');
    this.log.info(
      { state: completion.state, startedAt: trace.startedAt, phases: trace.phases() },
      'run execution finished',
    );
    return completion.state.toLowerCase();
  }

  /**
   * The runner stops and leaves the execution to its next process (its agent runs on): heartbeats stop, the events so
   * far are sent, and nothing is completed.
   */
  async detach(): Promise<void> {
    clearInterval(this.heartbeat);
    this.stopSignal.removeEventListener('abort', this.onStop);
    await this.reporter.close().catch(() => undefined);
    this.log.info('run left to the next runner process');
  }

  /** Another replica took the execution over: it is no longer this runner's to report or end. */
  get takenOver(): boolean {
    return this.taken.signal.aborted;
  }

  /** The runner's stop outranks a halt, which outranks a cancellation; each keeps the transcript and session. */
  private settle(driven: Completion): Completion {
    const kept = { transcript: driven.transcript, session: driven.session };
    if (this.stopSignal.aborted) {
      // The stop's own cause when it has one (the sandbox was lost), else an ordinary shutdown.
      return {
        state: 'ERROR',
        message:
          this.stopSignal.reason instanceof SandboxUnavailable
            ? this.stopSignal.reason.message
            : 'The runner shut down while the run was in progress',
        errorCode: 'resource_unavailable',
      };
    }
    if (this.halted) return { ...this.halted, ...kept };
    if (this.abort.signal.aborted) return { state: 'CANCELLED', message: 'Cancelled', ...kept };
    return driven;
  }
}
