/** What RunSlots drives of the queue's worker (BullMQ's Worker). */
export interface SlotWorker {
  concurrency: number;
  pause(doNotWaitActive?: boolean): Promise<void>;
  resume(): void;
}

/**
 * The runner's RUNNER_CONCURRENCY slots, shared by the queue's jobs and the executions it adopts (taken back at start,
 * or adopted from other replicas' leases): an adopted run holds a slot until it ends. The worker takes jobs only into
 * the slots no adopted run holds (its concurrency; paused when none is left), and an ask for runs to adopt is for the
 * free slots only, reserved until its answer's executions hold theirs, so the worker cannot fill them meanwhile.
 */
export class RunSlots {
  private adopted = 0;
  private reserved = 0;
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

  /** Reserves the free slots for one ask for runs to adopt (`count` 0: do not ask); `release` once it is answered. */
  reserve(): { count: number; release(): void } {
    const count = Math.max(0, this.total - this.adopted - this.reserved - this.jobs);
    this.reserved += count;
    this.apply();
    return {
      count,
      release: () => {
        this.reserved -= count;
        this.apply();
      },
    };
  }

  private apply(): void {
    const worker = this.worker;
    if (!worker) return;
    const room = this.total - this.adopted - this.reserved;
    // BullMQ's concurrency is at least 1: no room at all is a pause (the jobs running go on).
    if (room < 1) return void worker.pause(true);
    worker.concurrency = room;
    worker.resume();
  }
}
