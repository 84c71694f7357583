/** A follow-up as the orchestrator offers it: its ID makes an offer made again harmless. */
export interface OfferedFollowup {
  followup_id: string;
  message: string;
}

/**
 * Follow-ups delivered to a live harness, in arrival order; a harness either waits for the next or drains. The
 * orchestrator offers a follow-up until the runner acknowledges it (`acknowledged`), so the same one may arrive more
 * than once, also in the next runner process: it is kept once, by its ID.
 */
export class FollowupInbox {
  private readonly queue: OfferedFollowup[] = [];
  private waiters: Array<(followup: OfferedFollowup) => void> = [];
  /** Every follow-up handed to the harness, in order (`taken`). */
  private readonly handed: OfferedFollowup[];
  private readonly received: Set<string>;
  /** How many of `handed` are durable (`keepIn`): those acknowledged. */
  private durable: number;
  private keep: (() => Promise<void>) | undefined;
  /** The IDs of the follow-ups the claim handed over with the prompt (the assignment's `pending_followups`). */
  private readonly atStart: string[];
  /** Whether the harness has been given the claim's follow-ups (`startedWith`), and whether durably. */
  private startGiven: boolean;
  private startDurable: boolean;
  /** A journal write in flight: one at a time, so a later write is never overtaken by an earlier one. */
  private writing = false;

  /**
   * `handedBefore`: what a previous runner process of the execution had handed to the harness (its record's).
   * `claimed`: the follow-ups the claim handed over, which the harness is given with the prompt; `started`: it was
   * (an execution taken back from a previous process, whose agent has them).
   */
  constructor(
    handedBefore: readonly OfferedFollowup[] = [],
    claimed: readonly OfferedFollowup[] = [],
    started = false,
  ) {
    this.handed = [...handedBefore];
    this.durable = this.handed.length;
    this.atStart = claimed.map((f) => f.followup_id);
    this.startGiven = started;
    this.startDurable = started;
    this.received = new Set([...this.atStart, ...this.handed.map((f) => f.followup_id)]);
  }

  /**
   * The harness is given the claim's follow-ups now (with the prompt): they are acknowledged once the journal, if
   * any, has been written since. Until then a runner that dies leaves them pending, and the next claim of the run
   * gets them (docs/run-lifecycle.md "Follow-ups across a lost agent or a runner restart").
   */
  startedWith(): void {
    if (this.atStart.length === 0) return;
    this.startGiven = true;
    this.persist();
  }

  push(followup: OfferedFollowup): void {
    if (this.received.has(followup.followup_id)) return;
    this.received.add(followup.followup_id);
    const waiter = this.waiters.shift();
    if (!waiter) return void this.queue.push(followup);
    this.hand([followup]);
    waiter(followup);
  }

  drain(): string[] {
    const followups = this.queue.splice(0, this.queue.length);
    this.hand(followups);
    return followups.map((f) => f.message);
  }

  /**
   * Has `journal` write down the follow-ups handed to the harness (the execution's adoption record), so that one is
   * acknowledged only once the next runner process would know it was handed: an agent that outlives this process
   * is not given it again, and one lost after its last checkpoint is (CliHarness.run). Without a journal (no
   * durable agent) a follow-up handed to the harness is acknowledged at once.
   */
  keepIn(journal: () => Promise<void>): void {
    this.keep = journal;
  }

  /**
   * The IDs of the follow-ups the harness has and that are durable: the orchestrator stops offering them. Those only
   * queued here are not acknowledged: this process may die before the harness takes them (at most the 200 ms a
   * harness polls its inbox), and the next one is offered them again.
   */
  acknowledged(): string[] {
    // A journal write that failed is tried again here (each poll asks): until one succeeds nothing new is acknowledged.
    this.persist();
    return [
      ...(this.startDurable ? this.atStart : []),
      ...this.handed.slice(0, this.durable).map((f) => f.followup_id),
    ];
  }

  /** The follow-ups handed to the harness so far, with their IDs, in order: what the adoption record keeps. */
  handedFollowups(): readonly OfferedFollowup[] {
    return this.handed;
  }

  /**
   * The follow-ups handed to the harness so far, in order: what an agent lost with its sandbox may have been given
   * after its last checkpointed turn, and so what its resumed session may lack (CliHarness.run).
   */
  taken(): readonly string[] {
    return this.handed.map((f) => f.message);
  }

  /** Resolves with the next follow-up, or undefined when the signal aborts or the timeout passes. */
  next(signal: AbortSignal, timeoutMs: number): Promise<string | undefined> {
    const queued = this.queue.shift();
    if (queued !== undefined) {
      this.hand([queued]);
      return Promise.resolve(queued.message);
    }
    return new Promise((resolve) => {
      const done = (message: string | undefined) => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        this.waiters = this.waiters.filter((w) => w !== waiter);
        resolve(message);
      };
      const waiter = (followup: OfferedFollowup) => done(followup.message);
      const onAbort = () => done(undefined);
      const timer = setTimeout(() => done(undefined), timeoutMs);
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  private hand(followups: OfferedFollowup[]): void {
    if (followups.length === 0) return;
    this.handed.push(...followups);
    this.persist();
  }

  /**
   * Makes what the harness was given durable (the journal, if any), then acknowledgeable. A failed write acknowledges
   * nothing: the orchestrator keeps offering the follow-up, and a runner that dies now has the next process hand it
   * again rather than lose it.
   */
  private persist(): void {
    const upTo = this.handed.length;
    const started = this.startGiven;
    if (upTo === this.durable && started === this.startDurable) return;
    const durable = () => {
      this.durable = Math.max(this.durable, upTo);
      this.startDurable ||= started;
    };
    if (!this.keep) return durable();
    if (this.writing) return;
    this.writing = true;
    void this.keep()
      .then(durable, () => undefined)
      .finally(() => {
        this.writing = false;
      });
  }
}
