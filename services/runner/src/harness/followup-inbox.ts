/** Follow-ups delivered to a live harness, in arrival order; a harness either waits for the next or drains. */
export class FollowupInbox {
  private readonly queue: string[] = [];
  private waiters: Array<(message: string) => void> = [];
  /** Every follow-up handed to the harness, in order (`taken`). */
  private readonly handed: string[] = [];

  push(message: string): void {
    const waiter = this.waiters.shift();
    if (!waiter) return void this.queue.push(message);
    this.handed.push(message);
    waiter(message);
  }

  drain(): string[] {
    const messages = this.queue.splice(0, this.queue.length);
    this.handed.push(...messages);
    return messages;
  }

  /**
   * The follow-ups handed to the harness so far, in order: what an agent lost with its sandbox may have been given
   * after its last checkpointed turn, and so what its resumed session may lack (CliHarness.run).
   */
  taken(): readonly string[] {
    return this.handed;
  }

  /** Resolves with the next follow-up, or undefined when the signal aborts or the timeout passes. */
  next(signal: AbortSignal, timeoutMs: number): Promise<string | undefined> {
    const queued = this.queue.shift();
    if (queued !== undefined) {
      this.handed.push(queued);
      return Promise.resolve(queued);
    }
    return new Promise((resolve) => {
      const done = (message: string | undefined) => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        this.waiters = this.waiters.filter((w) => w !== waiter);
        resolve(message);
      };
      const waiter = (message: string) => done(message);
      const onAbort = () => done(undefined);
      const timer = setTimeout(() => done(undefined), timeoutMs);
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }
}
