import { createLogger } from '@conveyor/logger';
import { Backoff, BackgroundLoop } from './background-loop';

/** A logger whose lines the test reads back. */
function capturedLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const logger = createLogger(
    { service: 'test', level: 'debug' },
    { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) },
  );
  return { logger, lines, messages: () => lines.map((l) => l.msg) };
}

describe('Backoff', () => {
  it('doubles up to the cap, with half of each delay random', () => {
    const low = new Backoff(500, 4000, () => 0);
    expect([1, 2, 3, 4, 5].map(() => low.next())).toEqual([250, 500, 1000, 2000, 2000]);
    const high = new Backoff(500, 4000, () => 1);
    expect([1, 2, 3, 4, 5].map(() => high.next())).toEqual([500, 1000, 2000, 4000, 4000]);
    high.reset();
    expect(high.next()).toBe(500);
  });
});

describe('BackgroundLoop', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  /** Lets the pass in flight settle (its awaits are microtasks). */
  const settle = () => jest.advanceTimersByTimeAsync(0);

  it('survives failing passes, backs off, logs the outage and the recovery once each, and resumes', async () => {
    const { logger, lines, messages } = capturedLogger();
    let failing = true;
    const attempts: number[] = [];
    const loop = new BackgroundLoop({
      name: 'sweep',
      dependency: 'postgres',
      intervalMs: 5000,
      logger,
      random: () => 1,
      run: async () => {
        attempts.push(Date.now());
        if (failing)
          throw Object.assign(new Error("Can't reach database server"), {
            name: 'PrismaClientKnownRequestError',
            code: 'P1001',
          });
      },
    });
    const start = Date.now();
    loop.start();
    await settle();
    // 500, 1000, 2000, 4000, 8000, 15000 (capped), 15000 ms after each failure.
    await jest.advanceTimersByTimeAsync(500 + 1000 + 2000 + 4000 + 8000 + 15_000 + 15_000);
    expect(attempts.map((t) => t - start)).toEqual([0, 500, 1500, 3500, 7500, 15_500, 30_500, 45_500]);
    expect(loop.health()).toMatchObject({ ok: false, failures: 8, error: "Can't reach database server" });
    expect(messages()).toEqual(['dependency unavailable; backing off']);
    expect(lines[0]).toMatchObject({ level: 'warn', loop: 'sweep', dependency: 'postgres', retryInMs: 500 });

    failing = false;
    await jest.advanceTimersByTimeAsync(15_000);
    expect(loop.health()).toEqual({ ok: true });
    expect(lines[1]).toMatchObject({
      level: 'info',
      msg: 'dependency available again; resumed',
      loop: 'sweep',
      dependency: 'postgres',
      failures: 8,
    });
    // Back to the interval, and the backoff starts afresh at the next outage.
    const before = attempts.length;
    await jest.advanceTimersByTimeAsync(10_000);
    expect(attempts.length).toBe(before + 2);
    failing = true;
    await jest.advanceTimersByTimeAsync(5000 + 500);
    expect(attempts.length).toBe(before + 4);
    expect(messages().filter((m) => m === 'dependency unavailable; backing off')).toHaveLength(2);
    await loop.stop();
  });

  it('logs a failure that is no outage (a bug) at every attempt', async () => {
    const { logger, lines } = capturedLogger();
    const loop = new BackgroundLoop({
      name: 'sweep',
      dependency: 'postgres',
      intervalMs: 5000,
      logger,
      random: () => 1,
      run: () => Promise.reject(new TypeError("Cannot read properties of undefined (reading 'id')")),
    });
    loop.start();
    await jest.advanceTimersByTimeAsync(500 + 1000);
    expect(lines.map((l) => [l.level, l.msg])).toEqual([
      ['error', 'background pass failed'],
      ['error', 'background pass failed'],
      ['error', 'background pass failed'],
    ]);
    await loop.stop();
  });

  it('coalesces triggers during a pass into one more pass, and ignores them while backing off', async () => {
    const { logger } = capturedLogger();
    let release: () => void = () => undefined;
    let calls = 0;
    let fail = false;
    const loop = new BackgroundLoop({
      name: 'relay',
      dependency: 'redis',
      intervalMs: 60_000,
      logger,
      runAtStart: false,
      run: () => {
        calls++;
        if (fail) return Promise.reject(new Error('Connection is closed.'));
        return new Promise<void>((resolve) => (release = resolve));
      },
    });
    loop.start();
    const first = loop.trigger();
    void loop.trigger();
    void loop.trigger();
    expect(calls).toBe(1);
    release();
    await settle();
    expect(calls).toBe(2);
    release();
    await first;
    await settle();
    expect(calls).toBe(2);

    fail = true;
    await loop.trigger();
    expect(calls).toBe(3);
    // Backing off: a trigger waits for the scheduled retry instead of asking the failing dependency again.
    await loop.trigger();
    await loop.trigger();
    expect(calls).toBe(3);
    await jest.advanceTimersByTimeAsync(500);
    expect(calls).toBe(4);
    await loop.stop();
  });

  it('stops after the pass in flight and runs no more', async () => {
    const { logger } = capturedLogger();
    let calls = 0;
    let release: () => void = () => undefined;
    const loop = new BackgroundLoop({
      name: 'retention',
      dependency: 'postgres',
      intervalMs: 1000,
      logger,
      run: () => {
        calls++;
        return new Promise<void>((resolve) => (release = resolve));
      },
    });
    loop.start();
    let stopped = false;
    const stopping = loop.stop().then(() => (stopped = true));
    await settle();
    expect(stopped).toBe(false);
    release();
    await stopping;
    await jest.advanceTimersByTimeAsync(10_000);
    expect(calls).toBe(1);
    await loop.trigger();
    expect(calls).toBe(1);
  });
});
