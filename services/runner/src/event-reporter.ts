import type { RunEvent } from '@conveyor/run-events';
import type { RunnerControl__Output } from '@conveyor/proto';
import type { OrchestratorLink } from './orchestrator-link';
import { orchestratorUnreachable } from './run-control';
import { SecretRedactor } from './secret-redactor';

/**
 * Batches a run's events to the orchestrator (a flush every `intervalMs`, or on demand), keeps the raw
 * transcript, and hands the control answers (cancel, follow-ups) to `onControl`. Every event and the transcript
 * pass through `redactor`, so a secret the run knows of never reaches the run's record.
 */
export class EventReporter {
  private buffer: RunEvent[] = [];
  private readonly transcript: string[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
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
  ) {
    // flush() hands its failures to onError; the catch is for onError's own.
    this.timer = setInterval(() => void this.flush().catch(this.onError), intervalMs);
    this.timer.unref();
  }

  emit(raw: RunEvent): void {
    const event = this.redactor.json(raw);
    this.buffer.push(event);
    this.transcript.push(
      JSON.stringify({ at: new Date().toISOString(), execution: this.target.execution, ...event }),
    );
  }

  /** Serialized so events keep their order across flushes. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      if (this.buffer.length === 0) return;
      const batch = this.buffer;
      this.buffer = [];
      try {
        const control = await this.link.call('ReportEvents', {
          run_id: this.target.runId,
          execution: this.target.execution,
          runner_id: this.target.runnerId,
          events_json: batch.map((e) => JSON.stringify(e)),
        });
        this.unreachable = false;
        this.answeredAt = Date.now();
        this.onControl(control);
      } catch (err) {
        // Keep the events for the next attempt, unless the run was taken from us (onError decides). An unreachable
        // orchestrator is reported once per outage, not at every batch (5 a second).
        this.buffer = [...batch, ...this.buffer];
        const outage = orchestratorUnreachable(err);
        if (!outage || !this.unreachable) this.onError(err);
        this.unreachable = outage;
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
   * Stops batching and hands over what was not reported yet (each event as JSON, in order), for the completion to
   * carry: one call less per execution than a last batch of its own. Waits for a batch in flight first.
   */
  async takeRest(): Promise<string[]> {
    this.stop();
    await this.flushing;
    const rest = this.buffer.map((e) => JSON.stringify(e));
    this.buffer = [];
    return rest;
  }

  private stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
