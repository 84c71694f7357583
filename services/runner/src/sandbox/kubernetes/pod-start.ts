import { SandboxUnavailable } from '../run-sandbox';
import type { PodStatus } from './kubernetes-api';

export interface PodStartBounds {
  /** How long the Pod may take to run at all (scheduling and image pull included). */
  startTimeoutMs: number;
  /** How long the scheduler may keep saying it cannot place the Pod before the run is given up. */
  unschedulableTimeoutMs: number;
  /** Between two reads of the Pod's status. */
  pollMs: number;
}

/**
 * Waits until the run's Pod is running. A Pod the scheduler cannot place (too little CPU or memory on every node, a
 * taint, a quota) would otherwise wait silently for the whole start timeout: each new reason the scheduler gives is
 * passed to `onWaiting` (the run's timeline), and once it has said so for `unschedulableTimeoutMs` the run is refused
 * naming that reason. A Pod scheduled later (a node added by an autoscaler, another run ended) goes on as usual.
 */
export async function waitForPodStart(
  read: () => Promise<PodStatus>,
  bounds: PodStartBounds,
  onWaiting: (why: string) => void,
  changes?: (onChange: () => void) => Promise<() => void>,
): Promise<void> {
  // A watch wakes the wait as soon as the Pod changes: polling alone adds half its interval on average to every run's
  // start (measured: bench/README.md, time to agent on Kubernetes). Polling stays, for a watch that drops.
  // `changed`: the Pod changed since the last read began, so the next read must not wait.
  let changed = false;
  let wake: (() => void) | undefined;
  const stop = await changes?.(() => {
    changed = true;
    wake?.();
  }).catch(() => undefined);
  const reading = () => {
    changed = false;
    return read();
  };
  try {
    await waitLoop(reading, bounds, onWaiting, (ms) =>
      changed
        ? Promise.resolve()
        : new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, ms);
            wake = () => {
              clearTimeout(timer);
              resolve();
            };
          }),
    );
  } finally {
    stop?.();
  }
}

async function waitLoop(
  read: () => Promise<PodStatus>,
  bounds: PodStartBounds,
  onWaiting: (why: string) => void,
  pause: (ms: number) => Promise<void>,
): Promise<void> {
  const deadline = Date.now() + bounds.startTimeoutMs;
  let unschedulableSince: number | undefined;
  let told: string | undefined;
  for (;;) {
    const { phase, reason, unschedulable } = await read();
    if (phase === 'Running') return;
    if (phase === 'Failed' || phase === 'Succeeded')
      throw new SandboxUnavailable(`run pod ended before it started (${reason ?? phase})`);
    const now = Date.now();
    if (unschedulable === undefined) unschedulableSince = undefined;
    else {
      unschedulableSince ??= now;
      if (unschedulable !== told) onWaiting(`waiting for a node to run the run's pod: ${unschedulable}`);
      told = unschedulable;
      if (now - unschedulableSince >= bounds.unschedulableTimeoutMs)
        throw new SandboxUnavailable(
          `no node could run the run's pod for ${Math.round(bounds.unschedulableTimeoutMs / 1000)} s: ${unschedulable}`,
        );
    }
    if (now >= deadline)
      throw new SandboxUnavailable(`run pod not running after ${bounds.startTimeoutMs} ms`);
    await pause(bounds.pollMs);
  }
}
