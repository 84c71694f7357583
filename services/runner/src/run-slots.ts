/** What RunSlots drives of the queue's worker (BullMQ's Worker). */
export interface SlotWorker {
  concurrency: number;
  pause(doNotWaitActive?: boolean): Promise<void>;
  resume(): void;
}

/**
 * The runner's RUNNER_CONCURRENCY slots, shared by the queue's jobs and the executions it adopts (taken back at start,
 * or adopted from other replicas' leases): an adopted run holds a slot until it ends. The worker's concurrency is the
 * slots no adopted run holds (paused only while adopted runs hold them all), and an ask for runs to adopt is for the
 * slots neither holds (`free`). Nothing is reserved while an ask is in flight: a job the worker claims meanwhile can
 * overshoot RUNNER_CONCURRENCY by at most one ask's answer, until a run ends. Reserving instead lowered the worker's
 * concurrency below its running jobs on every ask, and BullMQ's main loop then waits for a running job to END before it
 * claims again — with long steps, a replica took no new run for minutes (docs/sandbox.md "Run leases").
 */
export class RunSlots {
  private adopted = 0;
  private jobs = 0;
  private worker: SlotWorker | undefined;

  constructor(private readonly total: number) {}

  /** The queue's worker (made with `autorun: false`): started here, its concurrency the slots left to jobs. */
  attach(worker: SlotWorker): void {
    this.worker = worker;
    this.apply();
  }

  /** The runner stops: the worker is no longer started or resized (it is closing). */
  detach(): void {
    this.worker = undefined;
  }

  /** Runs one job of the worker in its slot. */
  async job<T>(run: () => Promise<T>): Promise<T> {
    this.jobs++;
    try {
      return await run();
    } finally {
      this.jobs--;
    }
  }

  /** An adopted execution holds a slot until it settles. */
  adopt(execution: Promise<unknown>): void {
    this.adopted++;
    this.apply();
    void execution.finally(() => {
      this.adopted--;
      this.apply();
    });
  }

  /** The slots neither a job nor an adopted run holds: how many runs one ask may adopt (0: do not ask). */
  free(): number {
    return Math.max(0, this.total - this.adopted - this.jobs);
  }

  // Called only when the adopted count changes, so the worker is not paused and resumed around every ask.
  private apply(): void {
    const worker = this.worker;
    if (!worker) return;
    const room = this.total - this.adopted;
    // BullMQ's concurrency is at least 1: no room at all is a pause (the jobs running go on).
    if (room < 1) return void worker.pause(true);
    worker.concurrency = room;
    worker.resume();
  }
}
