import { createLogger } from '@conveyor/logger';
import { adoptLeasedRuns } from './adopt-leased-runs';
import { RunSlots, type SlotWorker } from './run-slots';

const log = createLogger({ service: 'runner-test', level: 'silent' });

/** The queue's worker as the slots drive it: its concurrency, and whether it takes jobs. */
function worker() {
  const state = { concurrency: 0, takesJobs: false };
  const slotWorker: SlotWorker = {
    set concurrency(n: number) {
      state.concurrency = n;
    },
    get concurrency() {
      return state.concurrency;
    },
    pause: async () => void (state.takesJobs = false),
    resume: () => void (state.takesJobs = true),
  };
  return { state, slotWorker };
}

/** An execution that runs until `end` is called. */
function execution() {
  let end = () => undefined as void;
  const running = new Promise<void>((resolve) => (end = resolve));
  return { running, end: async () => (end(), await running, await Promise.resolve()) };
}

describe('RunSlots: adopted runs count against RUNNER_CONCURRENCY', () => {
  it('takes no job and asks for no run while adopted runs hold every slot, and frees them as they end', async () => {
    const slots = new RunSlots(2);
    const { state, slotWorker } = worker();
    const [a, b] = [execution(), execution()];
    slots.adopt(a.running);
    slots.adopt(b.running);
    slots.attach(slotWorker);
    expect(state.takesJobs).toBe(false);
    expect(slots.free()).toBe(0);

    await a.end();
    expect(state).toEqual({ concurrency: 1, takesJobs: true });
    await b.end();
    expect(state).toEqual({ concurrency: 2, takesJobs: true });
  });

  it('asks only for the slots neither jobs nor adopted runs hold, and leaves the worker alone while asking', async () => {
    const slots = new RunSlots(3);
    const { state, slotWorker } = worker();
    slots.attach(slotWorker);
    const job = execution();
    const running = slots.job(() => job.running);
    expect(slots.free()).toBe(2);
    // An ask changes nothing of the worker: only adopted runs resize it.
    expect(state).toEqual({ concurrency: 3, takesJobs: true });
    slots.adopt(execution().running);
    slots.adopt(execution().running);
    expect(state).toEqual({ concurrency: 1, takesJobs: true });
    expect(slots.free()).toBe(0);
    await job.end();
    await running;
  });
});

describe('adoptLeasedRuns', () => {
  it('asks AdoptRuns for the free slots only, and not at all once the runner is full', async () => {
    const slots = new RunSlots(2);
    const limits: number[] = [];
    const take = async (limit: number) => (limits.push(limit), [execution().running]);
    const adoption = adoptLeasedRuns(take, (e) => slots.adopt(e), slots, log, 1);
    while (limits.length < 2) await new Promise((resolve) => setTimeout(resolve, 5));
    // Several more ask intervals pass: the full runner asks no more.
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setTimeout(resolve, 5));
    await adoption.stop();
    expect(limits).toEqual([2, 1]);
  });
});
