import { AppError } from '@conveyor/errors';
import { assertCron, nextTickAfter } from './cron-schedule';

function errorOf(fn: () => void): AppError {
  try {
    fn();
  } catch (err) {
    return err as AppError;
  }
  throw new Error('expected an error');
}

describe('cron schedule', () => {
  const from = Date.parse('2026-03-10T08:30:00.000Z');

  it('computes the next tick in UTC by default and in the given time zone', () => {
    expect(nextTickAfter('0 9 * * *', 'UTC', from)?.toISOString()).toBe('2026-03-10T09:00:00.000Z');
    // 09:00 in Paris (UTC+1 in March before DST) is 08:00 UTC, already past: next day.
    expect(nextTickAfter('0 9 * * *', 'Europe/Paris', from)?.toISOString()).toBe('2026-03-11T08:00:00.000Z');
    expect(nextTickAfter('* * * * * *', 'UTC', from + 400)?.toISOString()).toBe('2026-03-10T08:30:01.000Z');
  });

  it('accepts five fields, six with seconds and aliases', () => {
    for (const cron of ['0 9 * * *', '*/5 * * * * *', '0 0 * * MON-FRI', '@daily'])
      expect(() => assertCron(cron, 'UTC')).not.toThrow();
  });

  it.each([
    ['61 * * * *', 'expected range 0-59'],
    ['bogus * * * *', 'bogus'],
    ['* * * *', 'got 4'],
    ['* * * * * * *', 'got 7'],
    ['', 'empty'],
    ['0 0 31 2 *', 'day of month'],
  ])('rejects %j with a clear invalid_request naming cron_schedule', (cron, reason) => {
    const err = errorOf(() => assertCron(cron, 'UTC'));
    expect(err.code).toBe('invalid_request');
    expect(err.message).toMatch(/^cron_schedule: /);
    expect(err.message).toContain(reason);
  });

  it('rejects an unknown time zone naming the timezone field', () => {
    const err = errorOf(() => assertCron('0 9 * * *', 'Mars/Olympus'));
    expect(err.code).toBe('invalid_request');
    expect(err.message).toMatch(/^timezone: "Mars\/Olympus" is not an IANA time zone/);
  });
});
