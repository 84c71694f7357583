import { outageOf } from '@conveyor/errors';
import type { Logger } from '@conveyor/logger';

/** Capped exponential backoff with jitter: a failing dependency is asked less and less often, never in lockstep. */
export class Backoff {
  private failures = 0;

  constructor(
    private readonly initialMs: number,
    private readonly maxMs: number,
    private readonly random: () => number = Math.random,
  ) {}

  /** The delay before the next attempt after one more failure: half fixed, half random ("equal jitter"). */
  next(): number {
    const ceiling = Math.min(this.maxMs, this.initialMs * 2 ** Math.min(this.failures, 30));
    this.failures++;
    return Math.round(ceiling / 2 + (this.random() * ceiling) / 2);
  }

  get attempts(): number {
    return this.failures;
  }

  reset(): void {
    this.failures = 0;
  }
}

/**
 * Logs a dependency's outage once when it starts and once when it ends, whatever the number of failed attempts in
 * between (a loop retrying every second would otherwise write a line per attempt for as long as the outage lasts).
 * A failure that is not an outage (`outageOf` knows none) is a bug: it is logged as an error at every attempt.
 */
export class OutageLog {
  private since: number | undefined;
  private failures = 0;
  private lastError: string | undefined;

  constructor(
    private readonly logger: Logger,
    private readonly fields: { loop: string; dependency: string },
    private readonly options: {
      /** A connection's own failures (a LISTEN connection, a Redis client) are all its dependency's outage. */
      connection?: boolean;
      now?: () => number;
    } = {},
  ) {}

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  failed(err: unknown, retryInMs?: number): void {
    this.failures++;
    this.lastError = err instanceof Error ? err.message : String(err);
    const seen = outageOf(err);
    const outage = seen !== undefined || this.options.connection === true;
    if (!outage) this.logger.error({ ...this.fields, err, retryInMs }, 'background pass failed');
    if (this.since !== undefined) return;
    this.since = this.now();
    // The error names the dependency when it can (a loop may use several); else the one the loop was built for.
    const dependency = seen && seen !== 'network' ? seen : this.fields.dependency;
    if (outage)
      this.logger.warn({ ...this.fields, dependency, err, retryInMs }, 'dependency unavailable; backing off');
  }

  succeeded(): void {
    if (this.since === undefined) return;
    this.logger.info(
      { ...this.fields, failures: this.failures, outageMs: this.now() - this.since },
      'dependency available again; resumed',
    );
    this.since = undefined;
    this.failures = 0;
    this.lastError = undefined;
  }

  health(): LoopHealth {
    return this.since === undefined
      ? { ok: true }
      : {
          ok: false,
          failingSinceMs: this.now() - this.since,
          failures: this.failures,
          error: this.lastError,
        };
  }
}

export interface LoopHealth {
  ok: boolean;
  failingSinceMs?: number;
  failures?: number;
  error?: string;
}

export interface BackgroundLoopOptions {
  /** For logs and health: what the loop does ("lost-runner sweep"). */
  name: string;
  /** What it cannot work without ("postgres", "redis", "kafka", "orchestrator"), named in the outage log. */
  dependency: string;
  /** Between passes that succeeded. */
  intervalMs: number;
  /** One pass; a rejection is an outage of `dependency` until a pass succeeds again. */
  run: () => Promise<unknown>;
  logger: Logger;
  /** The first retry after a failure, doubled per failure up to `maxMs` (defaults: 500 ms, 15 s). */
  backoff?: { initialMs?: number; maxMs?: number };
  /** A pass at start() rather than one interval later (default true). */
  runAtStart?: boolean;
  random?: () => number;
  now?: () => number;
}

export const DEFAULT_BACKOFF = { initialMs: 500, maxMs: 15_000 };

/**
 * The only way a service runs periodic work. It owns the timer, runs one pass at a time, catches every failure (a
 * rejected pass can never become an unhandled rejection that ends the process), backs off while the pass keeps
 * failing, logs the outage once and the recovery once, reports its health, and stops on shutdown after the pass
 * in flight.
 */
export class BackgroundLoop {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private started = false;
  private stopped = false;
  private readonly backoff: Backoff;
  private readonly outage: OutageLog;

  constructor(private readonly options: BackgroundLoopOptions) {
    const { initialMs, maxMs } = { ...DEFAULT_BACKOFF, ...options.backoff };
    this.backoff = new Backoff(initialMs, maxMs, options.random);
    this.outage = new OutageLog(
      options.logger,
      { loop: options.name, dependency: options.dependency },
      { now: options.now },
    );
  }

  start(): void {
    if (this.started || this.stopped) return;
    this.started = true;
    if (this.options.runAtStart === false) this.schedule(this.options.intervalMs);
    else void this.trigger();
  }

  /**
   * A pass now (work is waiting: a run was just written), or one more right after the pass in flight. While the
   * dependency is failing it waits for the backoff's next attempt instead, so callers cannot hammer it. Never
   * rejects.
   */
  trigger(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    if (this.running) {
      this.again = true;
      return this.running;
    }
    if (!this.outage.health().ok && this.timer) return Promise.resolve();
    clearTimeout(this.timer);
    this.timer = undefined;
    this.running = this.passes()
      // passes() catches the pass's failures; what could still throw is a log write to a closed pipe.
      .catch(() => undefined)
      .finally(() => {
        this.running = undefined;
      });
    return this.running;
  }

  health(): LoopHealth {
    return this.outage.health();
  }

  /** Resolves when the pass in flight (if any) has ended, without asking for another. */
  async settled(): Promise<void> {
    await this.running;
  }

  /** No new pass; waits for the one in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }

  private async passes(): Promise<void> {
    do {
      this.again = false;
      try {
        await this.options.run();
      } catch (err) {
        const delay = this.backoff.next();
        // Scheduled before logging: the loop goes on even if the log cannot be written.
        this.schedule(delay);
        this.outage.failed(err, delay);
        return;
      }
      this.backoff.reset();
      this.outage.succeeded();
    } while (this.again && !this.stopped);
    this.schedule(this.options.intervalMs);
  }

  private schedule(delayMs: number): void {
    // A loop not started (a test driving it) runs only when triggered.
    if (this.stopped || !this.started) return;
    clearTimeout(this.timer);
    // The callback cannot reject: trigger() catches everything its pass throws.
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.trigger();
    }, delayMs);
    this.timer.unref();
  }
}
