import { nextFireTimes } from './cron-preview';

describe('nextFireTimes', () => {
  const from = new Date('2026-11-27T10:15:00Z');

  it('lists the next five times in the time zone', () => {
    expect(nextFireTimes('0 9 * * 1-5', 'Europe/Paris', from)).toEqual(
      [
        '2026-11-30T08:00:00Z',
        '2026-12-01T08:00:00Z',
        '2026-12-02T08:00:00Z',
        '2026-12-03T08:00:00Z',
        '2026-12-04T08:00:00Z',
      ].map((iso) => new Date(iso)),
    );
  });

  it('refuses partial expressions as the API does, and explains a bad field', () => {
    expect(nextFireTimes('* * * *', 'UTC', from)).toBe('A cron expression has 5 or 6 fields');
    expect(nextFireTimes('0 25 * * *', 'UTC', from)).toMatch(/25/);
  });
});
