import { AppError } from '@conveyor/errors';
import type { Logger } from '@conveyor/logger';
import { Backoff, OutageLog } from '@conveyor/runtime';
import { orchestratorUnreachable } from './run-control';

/**
 * A report worth sending again: the orchestrator did not answer (down, restarting, past the deadline) or answered its
 * own retryable 503 (its database is away: `resource_unavailable`), or it is out of capacity (`rate_limited`, gRPC
 * RESOURCE_EXHAUSTED). A refusal (conflict: the run is no longer this runner's; invalid_request) or a bug
 * (internal_error) would be refused again.
 */
export const retryableReport = (err: unknown): boolean =>
  orchestratorUnreachable(err) || (err instanceof AppError && err.code === 'rate_limited');

export interface AcknowledgePolicy {
  /** Gives up (throws the last failure) when the next attempt would start past this long after the first. */
  giveUpAfterMs: number;
  /** The first retry's delay, doubled per failure up to `maxDelayMs`, half of each random (defaults: 250 ms, 10 s). */
  initialDelayMs?: number;
  maxDelayMs?: number;
  now?: () => number;
  sleep?: (ms: number) => Promise<unknown>;
}

/**
 * Sends one report until the orchestrator acknowledges it: retryable failures (above) are retried with backoff, the
 * outage logged once when it begins and once when it ends; any other failure is thrown at once. The report must be
 * idempotent (the orchestrator records a batch's events and a completion once however often they arrive), since an
 * attempt that timed out may have committed.
 */
export async function untilAcknowledged<T>(
  what: string,
  attempt: () => Promise<T>,
  policy: AcknowledgePolicy,
  log: Logger,
): Promise<T> {
  const now = policy.now ?? Date.now;
  const wait = policy.sleep ?? ((ms: number) => new Promise((resolve) => setTimeout(resolve, ms)));
  const backoff = new Backoff(policy.initialDelayMs ?? 250, policy.maxDelayMs ?? 10_000);
  const outage = new OutageLog(log, { loop: what, dependency: 'orchestrator' }, { connection: true });
  const giveUpAt = now() + policy.giveUpAfterMs;
  for (;;) {
    try {
      const answer = await attempt();
      outage.succeeded();
      return answer;
    } catch (err) {
      const delay = backoff.next();
      if (!retryableReport(err) || now() + delay > giveUpAt) throw err;
      outage.failed(err, delay);
      await wait(delay);
    }
  }
}
