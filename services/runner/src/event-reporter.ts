import type { RunEvent } from '@conveyor/run-events';
import type { RunnerControl__Output } from '@conveyor/proto';
import { Backoff } from '@conveyor/runtime';
import { retryableReport } from './acknowledged-call';
import type { OrchestratorLink } from './orchestrator-link';
import { orchestratorUnreachable } from './run-control';
import { SecretRedactor } from './secret-redactor';

/** The events a batch or the completion carries, and where the first of them is in the execution (from 1). */
export interface NumberedEvents {
  events_json: string[];
  first_event: number;
}

/**
 * Batches a run's events to the orchestrator (a flush every `intervalMs`, or on demand), keeps the raw
 * transcript, and hands the control answers (cancel, follow-ups) to `onControl`. Every event and the transcript
 * pass through `redactor`, so a secret the run knows of never reaches the run's record.
 *
 * Events stay until the orchestrator acknowledges them. Each batch says where it starts in the execution's events
 * (`first_event`), so one sent again because its answer was lost is recorded once; after a retryable failure the
 * timer's batches back off (250 ms doubled up to 5 s), while heartbeats keep telling the orchestrator the run lives.
 */
export class EventReporter {
  /** The events not acknowledged yet, in order: the first is the execution's event number `acknowledged + 1`. */
  private pending: RunEvent[] = [];
  private acknowledged = 0;
  private readonly numbering: boolean;
  /** Writes down what is unacknowledged before it is sent (the adoption record, `writeAheadTo`). */
  private journal: (() => Promise<void>) | undefined;
  private followups: (() => { acknowledged_ids: string[] }) | undefined;
  private readonly transcript: string[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
  private sending = false;
  private readonly backoff = new Backoff(250, 5000);
  /** After a retryable failure, the timer sends nothing before this (epoch ms). */
  private retryAt = 0;
  /** The last batch failed because the orchestrator was unreachable: the next such failure is not reported again. */
  private unreachable = false;
  /** When the orchestrator last answered a batch (epoch ms; 0: never). */
  answeredAt = 0;
  readonly redactor = new SecretRedactor();

  constructor(
    private readonly link: Pick<OrchestratorLink, 'call'>,
    private readonly target: { runId: string; execution: number; runnerId: string },
    private readonly onControl: (control: RunnerControl__Output) => void,
    private readonly onError: (err: unknown) => void,
    intervalMs = 200,
    /**
     * Where the execution's events stand: a new execution's start at 1; for one a restarted runner took back, what its
     * adoption record kept unacknowledged (sent again: the orchestrator records each position once), numbered on from
     * there. 'unnumbered' for a record of an older runner that kept no events: its numbering began in the previous
     * process, so positions from here could fall on events this one never saw; its batches are recorded whole.
     */
    from: NumberedEvents | 'unnumbered' = { events_json: [], first_event: 1 },
  ) {
    this.numbering = from !== 'unnumbered';
    if (from !== 'unnumbered') {
      this.acknowledged = from.first_event - 1;
      this.pending = from.events_json.map((json) => JSON.parse(json) as RunEvent);
    }
    // flush() hands its failures to onError; the catch is for onError's own.
    // One batch in flight at a time: its write-ahead may wait out an orchestrator outage (lease-records.ts).
    this.timer = setInterval(() => {
      if (!this.sending && Date.now() >= this.retryAt) void this.flush().catch(this.onError);
    }, intervalMs);
    this.timer.unref();
  }

  emit(raw: RunEvent): void {
    const event = this.redactor.json(raw);
    this.pending.push(event);
    this.transcript.push(
      JSON.stringify({ at: new Date().toISOString(), execution: this.target.execution, ...event }),
    );
  }

  /** Serialized so events keep their order across flushes. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      if (this.pending.length === 0) return;
      const batch = this.unacknowledged();
      this.sending = true;
      try {
        await this.journal?.();
        const control = await this.link.call('ReportEvents', {
          run_id: this.target.runId,
          execution: this.target.execution,
          runner_id: this.target.runnerId,
          ...batch,
          ...(this.followups ? { followups: this.followups() } : {}),
        });
        this.pending.splice(0, batch.events_json.length);
        this.acknowledged += batch.events_json.length;
        this.backoff.reset();
        this.retryAt = 0;
        this.unreachable = false;
        this.answeredAt = Date.now();
        this.onControl(control);
      } catch (err) {
        // The events stay for the next attempt, unless the run was taken from us (onError decides). An unreachable
        // orchestrator is reported once per outage, not at every batch.
        if (retryableReport(err)) this.retryAt = Date.now() + this.backoff.next();
        const outage = orchestratorUnreachable(err);
        if (!outage || !this.unreachable) this.onError(err);
        this.unreachable = outage;
      } finally {
        this.sending = false;
      }
    });
    return this.flushing;
  }

  transcriptBytes(): Buffer {
    return Buffer.from(this.transcript.map((line) => `${line}\n`).join(''));
  }

  async close(): Promise<void> {
    this.stop();
    await this.flush();
  }

  /**
   * Stops batching and hands over what was not acknowledged yet (each event as JSON, in order, numbered), for the
   * completion to carry: one call less per execution than a last batch of its own. Waits for a batch in flight first.
   */
  async takeRest(): Promise<NumberedEvents> {
    this.stop();
    await this.flushing;
    await this.journal?.();
    const rest = this.unacknowledged();
    this.pending = [];
    return rest;
  }

  /**
   * Has `journal` write down the unacknowledged events before each batch (and the completion) is sent, so that a
   * runner killed with an answer outstanding leaves every event the orchestrator may have recorded to its next
   * process, which sends them again at the same positions (docs/run-lifecycle.md "Runner restarts").
   */
  writeAheadTo(journal: () => Promise<void>): void {
    this.journal = journal;
  }

  /** Has each batch acknowledge the follow-ups `followups` names (FollowupAcknowledgement in runner.proto). */
  acknowledgeFollowups(followups: () => { acknowledged_ids: string[] }): void {
    this.followups = followups;
  }

  /** The events not acknowledged yet, in order, numbered. */
  unacknowledged(): NumberedEvents {
    return {
      events_json: this.pending.map((e) => JSON.stringify(e)),
      first_event: this.numbering ? this.acknowledged + 1 : 0,
    };
  }

  private stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
