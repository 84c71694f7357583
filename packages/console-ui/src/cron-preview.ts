import { CronExpressionParser } from 'cron-parser';

/**
 * The next five times a cron expression fires, for the schedule form as one types. A preview only: the API parses
 * with BullMQ's own cron-parser (docs/schedules.md) and its error, shown at the field, is what counts. Same field
 * rule as the API: 5 or 6 fields, or an `@alias`.
 */
export function nextFireTimes(expression: string, timezone: string, from = new Date()): Date[] | string {
  const expr = expression.trim();
  const fields = expr.split(/\s+/).length;
  if (!expr.startsWith('@') && fields !== 5 && fields !== 6) return 'A cron expression has 5 or 6 fields';
  try {
    return CronExpressionParser.parse(expr, { tz: timezone || 'UTC', currentDate: from })
      .take(5)
      .map((d) => d.toDate());
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}
