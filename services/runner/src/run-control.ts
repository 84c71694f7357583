import { AppError, outageOf } from '@conveyor/errors';
import type { Logger } from '@conveyor/logger';
import type { RunnerControl__Output } from '@conveyor/proto';
import { OutageLog } from '@conveyor/runtime';
import type { FollowupInbox } from './harness/followup-inbox';

/** The orchestrator did not answer, or answered with its own 503: a wait, not a failure of the call. */
export const orchestratorUnreachable = (err: unknown): boolean =>
  (err instanceof AppError && err.code === 'resource_unavailable') || outageOf(err) !== undefined;

/**
 * What the orchestrator's answers to one execution's heartbeats and event batches mean: cancellation and follow-ups
 * come in, "no longer yours" stops the run, and an unreachable orchestrator is logged when the outage begins and
 * when it ends — not at every heartbeat (one a second) while it lasts.
 */
export class RunControl {
  private readonly outage: OutageLog;

  constructor(
    private readonly log: Logger,
    private readonly abort: AbortController,
    private readonly inbox: FollowupInbox,
    /** Where runs move between replicas: "no longer yours" means taken over, which lets go rather than stops. */
    private readonly takenOver?: () => void,
  ) {
    this.outage = new OutageLog(
      log,
      { loop: 'run heartbeat', dependency: 'orchestrator' },
      { connection: true },
    );
  }

  readonly answered = (control: RunnerControl__Output): void => {
    this.outage.succeeded();
    if (control.cancel_requested && !this.abort.signal.aborted) {
      this.log.info('cancellation requested; stopping harness');
      this.abort.abort();
    }
    for (const f of control.followups) this.inbox.push(f);
  };

  /** What each heartbeat and event batch acknowledges (FollowupAcknowledgement in runner.proto). */
  readonly acknowledgement = (): { acknowledged_ids: string[] } => ({
    acknowledged_ids: this.inbox.acknowledged(),
  });

  readonly failed = (err: unknown): void => {
    // The orchestrator says we no longer hold the run (cancelled and re-executed, swept as lost, or adopted by another
    // replica): stop — or, where another replica may hold the very agent, let go of it and kill nothing.
    if (err instanceof AppError && err.code === 'conflict') (this.takenOver ?? (() => this.abort.abort()))();
    else if (orchestratorUnreachable(err)) this.outage.failed(err);
    else this.log.warn({ err }, 'orchestrator call failed; will retry');
  };
}
