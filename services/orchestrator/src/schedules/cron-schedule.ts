import { defaultRepeatStrategy } from 'bullmq';
import { AppError } from '@conveyor/errors';

export const DEFAULT_TIMEZONE = 'UTC';

/**
 * Cron expressions are parsed by BullMQ's own repeat strategy (cron-parser, with the options BullMQ passes), so an
 * expression accepted here is one the job scheduler can fire, and the next run time shown is the tick it fires.
 * Five fields (minute precision) or six (leading seconds), or a predefined alias such as `@daily`.
 */
export function nextTickAfter(cron: string, timezone: string, afterMs: number): Date | null {
  const next = defaultRepeatStrategy(afterMs, { pattern: cron, tz: timezone });
  return typeof next === 'number' && Number.isFinite(next) ? new Date(next) : null;
}

/** IANA names only; `Intl` is the runtime's own time-zone database, the same one cron-parser's luxon reads. */
export function assertTimezone(timezone: string): void {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
  } catch {
    throw new AppError(
      'invalid_request',
      `timezone: "${timezone}" is not an IANA time zone (e.g. UTC, Europe/Paris)`,
      {
        details: { errors: [{ path: 'timezone', message: 'unknown time zone' }] },
      },
    );
  }
}

function invalidCron(cron: string, reason: string): AppError {
  return new AppError(
    'invalid_request',
    `cron_schedule: "${cron}" is not a valid cron expression: ${reason}`,
    {
      details: { errors: [{ path: 'cron_schedule', message: reason }] },
    },
  );
}

/** Throws invalid_request naming the problem; the time zone is checked first so its error is the clear one. */
export function assertCron(cron: string, timezone: string): void {
  assertTimezone(timezone);
  const trimmed = cron.trim();
  if (!trimmed) throw invalidCron(cron, 'it is empty');
  // cron-parser reads 1–4 fields as a partial expression; schedules must say every field.
  const fields = trimmed.split(/\s+/).length;
  if (!trimmed.startsWith('@') && (fields < 5 || fields > 6)) {
    throw invalidCron(
      cron,
      `expected 5 fields (minute hour day-of-month month day-of-week) or 6 with leading seconds, got ${fields}`,
    );
  }
  let next: Date | null;
  try {
    next = nextTickAfter(trimmed, timezone, Date.now());
  } catch (err) {
    throw invalidCron(cron, err instanceof Error ? err.message : String(err));
  }
  if (!next) throw invalidCron(cron, 'it never fires');
}
