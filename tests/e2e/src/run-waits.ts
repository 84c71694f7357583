import { apiCall, type Json } from '@conveyor/testing';
import type { RunningPlatform } from './platform';

export { apiCall, type Json };

/** Polls a run until it reaches one of `states`; fails with the services' logs otherwise. */
export async function waitForRunState(
  platform: RunningPlatform,
  runId: string,
  states: string[],
  timeoutMs = 30_000,
): Promise<Json> {
  const deadline = Date.now() + timeoutMs;
  let last: Json = {};
  while (Date.now() < deadline) {
    last = (await apiCall(platform, 'GET', `/agent/runs/${runId}`)).body;
    if (states.includes(last.state as string)) return last;
    await new Promise((r) => setTimeout(r, 150));
  }
  throw new Error(
    `run ${runId} stayed ${String(last.state)}, wanted ${states.join('|')}\n${platform.logs().slice(-4000)}`,
  );
}

/** Polls `probe` until it holds; fails with the services' logs after `timeoutMs`. */
export async function eventually(
  probe: () => Promise<boolean>,
  what: string,
  platform: RunningPlatform,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}\n${platform.logs().slice(-4000)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
