import { nextAttemptDelay } from './retry-schedule';

const SVIX = [0, 5000, 300000, 1800000, 7200000, 18000000, 36000000, 36000000];

describe('nextAttemptDelay', () => {
  it("follows the schedule with at most ±10 % jitter, and ends after the schedule's last attempt", () => {
    expect(nextAttemptDelay(SVIX, 1, undefined, () => 0.5)).toBe(5000);
    expect(nextAttemptDelay(SVIX, 1, undefined, () => 0)).toBe(4500);
    expect(nextAttemptDelay(SVIX, 1, undefined, () => 1)).toBe(5500);
    expect(nextAttemptDelay(SVIX, 2, undefined, () => 0.5)).toBe(300000);
    expect(nextAttemptDelay(SVIX, 7, undefined, () => 0.5)).toBe(36000000);
    expect(nextAttemptDelay(SVIX, 8, undefined, () => 0.5)).toBeUndefined();
  });

  it('takes Retry-After instead, capped at the longest wait of the schedule', () => {
    expect(nextAttemptDelay(SVIX, 1, 120_000)).toBe(120_000);
    expect(nextAttemptDelay(SVIX, 1, 0)).toBe(0);
    expect(nextAttemptDelay(SVIX, 1, 7 * 24 * 3600_000)).toBe(36000000);
    expect(nextAttemptDelay(SVIX, 8, 0)).toBeUndefined();
  });
});
