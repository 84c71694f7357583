import type { Logger } from '@conveyor/logger';
import type { RunSlots } from './run-slots';

/** Between two `AdoptRuns` asks of one replica: well under the lease expiry, so a released run waits seconds. */
export const ADOPT_INTERVAL_MS = 3000;

/**
 * Asks, every ADOPT_INTERVAL_MS until stopped, for the runs whose lease expired or was released (docs/sandbox.md
 * "Run leases") and takes each back (`take`: takeBackRuns over the lease records, at most `limit`); `onTaken` is told
 * of each execution so the runner counts it in its slots and waits for it at stop. Each ask is for the runner's free
 * slots only (`slots`), and a runner with none does not ask. One ask at a time; a failed one is logged and asked
 * again later.
 */
export function adoptLeasedRuns(
  take: (limit: number) => Promise<Array<Promise<unknown>>>,
  onTaken: (execution: Promise<unknown>) => void,
  slots: Pick<RunSlots, 'free'>,
  logger: Logger,
  intervalMs = ADOPT_INTERVAL_MS,
): { stop(): Promise<void> } {
  let stopped = false;
  let asking: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  const ask = async () => {
    const free = slots.free();
    if (free === 0) return;
    try {
      for (const execution of await take(free)) onTaken(execution);
    } catch (err) {
      logger.warn({ err }, 'could not ask for runs to adopt; asking again');
    }
  };
  const next = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      asking = ask().finally(next);
    }, intervalMs);
  };
  next();
  return {
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await asking;
    },
  };
}
