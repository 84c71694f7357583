import type { Logger } from '@conveyor/logger';

/** Between two `AdoptRuns` asks of one replica: well under the lease expiry, so a released run waits seconds. */
export const ADOPT_INTERVAL_MS = 3000;

/**
 * Asks, every ADOPT_INTERVAL_MS until stopped, for the runs whose lease expired or was released (docs/sandbox.md
 * "Run leases") and takes each back (`take`: takeBackRuns over the lease records); `onTaken` is told of each
 * execution so the runner waits for it at stop. One ask at a time; a failed one is logged and asked again later.
 */
export function adoptLeasedRuns(
  take: () => Promise<Array<Promise<unknown>>>,
  onTaken: (execution: Promise<unknown>) => void,
  logger: Logger,
  intervalMs = ADOPT_INTERVAL_MS,
): { stop(): Promise<void> } {
  let stopped = false;
  let asking: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  const ask = async () => {
    try {
      for (const execution of await take()) onTaken(execution);
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
