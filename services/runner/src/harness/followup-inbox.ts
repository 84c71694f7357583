/** Follow-ups delivered to a live harness, in arrival order; a harness either waits for the next or drains. */
export class FollowupInbox {
  private readonly queue: string[] = [];
  private waiters: Array<(message: string) => void> = [];

  push(message: string): void {
    const waiter = this.waiters.shift();
    if (waiter) waiter(message);
    else this.queue.push(message);
  }

  drain(): string[] {
    return this.queue.splice(0, this.queue.length);
  }

  /** Resolves with the next follow-up, or undefined when the signal aborts or the timeout passes. */
  next(signal: AbortSignal, timeoutMs: number): Promise<string | undefined> {
    const queued = this.queue.shift();
    if (queued !== undefined) return Promise.resolve(queued);
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
