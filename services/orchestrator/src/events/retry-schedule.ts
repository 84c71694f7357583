const JITTER = 0.1;

/**
 * When the attempt after `attemptsMade` failed ones is due, or undefined when the schedule is spent. `schedule[n]` is
 * the wait before attempt n+1 (schedule[0], usually 0, is the first attempt); each wait is jittered by up to ±10 %
 * so endpoints that failed together do not retry together. A `Retry-After` (429/503) replaces the scheduled wait,
 * capped at the schedule's longest.
 */
export function nextAttemptDelay(
  schedule: readonly number[],
  attemptsMade: number,
  retryAfterMs: number | undefined,
  random: () => number = Math.random,
): number | undefined {
  if (attemptsMade >= schedule.length) return undefined;
  if (retryAfterMs !== undefined) return Math.min(retryAfterMs, Math.max(...schedule));
  const base = schedule[attemptsMade]!;
  return Math.round(base * (1 + JITTER * (2 * random() - 1)));
}
