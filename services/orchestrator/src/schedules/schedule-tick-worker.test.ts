import type { Job } from 'bullmq';
import { tickTimeOf } from './schedule-tick-worker';

describe('tickTimeOf', () => {
  it('reads the tick time from the job ID BullMQ gives each tick of a scheduler', () => {
    const job = { id: 'repeat:sched_abc:1767225600000', opts: {}, timestamp: 1 } as unknown as Job;
    expect(tickTimeOf(job).toISOString()).toBe('2026-01-01T00:00:00.000Z');
  });

  it('falls back to prevMillis, then to the job timestamp', () => {
    expect(
      tickTimeOf({
        id: 'custom',
        opts: { prevMillis: 1767225601000 },
        timestamp: 5,
      } as unknown as Job).toISOString(),
    ).toBe('2026-01-01T00:00:01.000Z');
    expect(
      tickTimeOf({ id: undefined, opts: {}, timestamp: 1767225602000 } as unknown as Job).toISOString(),
    ).toBe('2026-01-01T00:00:02.000Z');
  });
});
