import { SandboxUnavailable } from '../run-sandbox';
import type { PodStatus } from './kubernetes-api';
import { waitForPodStart } from './pod-start';

const INSUFFICIENT_CPU = '0/1 nodes are available: 1 Insufficient cpu.';

/** Answers each read with the next status, the last one for ever. */
const statuses = (...list: PodStatus[]) => {
  const reads: PodStatus[] = [];
  const read = () => {
    const next = list.length > 1 ? list.shift()! : list[0]!;
    reads.push(next);
    return Promise.resolve(next);
  };
  return { read, reads };
};

const bounds = (unschedulableTimeoutMs: number) => ({
  startTimeoutMs: 60_000,
  unschedulableTimeoutMs,
  pollMs: 0,
});

describe('waitForPodStart', () => {
  it("says the scheduler's reason once per reason, then goes on when a node takes the Pod", async () => {
    const pod = statuses(
      { phase: 'Pending', unschedulable: INSUFFICIENT_CPU },
      { phase: 'Pending', unschedulable: INSUFFICIENT_CPU },
      { phase: 'Pending', unschedulable: '0/1 nodes are available: 1 Insufficient memory.' },
      { phase: 'Pending' },
      { phase: 'Running' },
    );
    const told: string[] = [];
    await waitForPodStart(pod.read, bounds(60_000), (why) => told.push(why));
    expect(told).toEqual([
      `waiting for a node to run the run's pod: ${INSUFFICIENT_CPU}`,
      "waiting for a node to run the run's pod: 0/1 nodes are available: 1 Insufficient memory.",
    ]);
    expect(pod.reads).toHaveLength(5);
  });

  it('refuses the run naming the reason once the scheduler has said it for the bound', async () => {
    const pod = statuses({ phase: 'Pending' }, { phase: 'Pending', unschedulable: INSUFFICIENT_CPU });
    const told: string[] = [];
    const waited = waitForPodStart(pod.read, bounds(0), (why) => told.push(why));
    await expect(waited).rejects.toBeInstanceOf(SandboxUnavailable);
    await expect(waited).rejects.toThrow(`no node could run the run's pod for 0 s: ${INSUFFICIENT_CPU}`);
    expect(told).toHaveLength(1);
  });

  it('a Pod that ended before it ran is refused with its reason', async () => {
    const pod = statuses({ phase: 'Pending' }, { phase: 'Failed', reason: 'Evicted' });
    await expect(waitForPodStart(pod.read, bounds(60_000), () => undefined)).rejects.toThrow(
      'run pod ended before it started (Evicted)',
    );
  });

  it('a Pod that never runs is refused at the start timeout, whatever it waits on', async () => {
    const pod = statuses({ phase: 'Pending' });
    await expect(
      waitForPodStart(
        pod.read,
        { startTimeoutMs: 0, unschedulableTimeoutMs: 60_000, pollMs: 0 },
        () => undefined,
      ),
    ).rejects.toThrow('run pod not running after 0 ms');
  });

  it('a change the watch reports ends the pause at once, without waiting for the next poll', async () => {
    const pod = statuses({ phase: 'Pending' }, { phase: 'Running' });
    let onChange: (() => void) | undefined;
    let stopped = false;
    await waitForPodStart(
      () => {
        // The Pod changes right after the first read: the watch says so.
        if (pod.reads.length === 0) setImmediate(() => onChange!());
        return pod.read();
      },
      { startTimeoutMs: 600_000, unschedulableTimeoutMs: 600_000, pollMs: 600_000 },
      () => undefined,
      (listener) => {
        onChange = listener;
        return Promise.resolve(() => (stopped = true));
      },
    );
    expect(pod.reads).toHaveLength(2);
    expect(stopped).toBe(true);
  });
});
