import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { createLogger } from '@conveyor/logger';
import { REDIS_URL, uniqueName } from '@conveyor/testing';
import { adoptLeasedRuns } from './adopt-leased-runs';
import { RunSlots } from './run-slots';

const log = createLogger({ service: 'runner-test', level: 'silent' });

/** Resolves once `done` holds (polled); throws if it still does not after 10 s, so a failed test stops polling. */
async function until(done: () => boolean, what: string): Promise<void> {
  const giveUpAt = Date.now() + 10_000;
  while (!done()) {
    if (Date.now() > giveUpAt) throw new Error(`never happened: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

// The runner's real BullMQ worker over a real Redis, driven by its slots.
describe('RunSlots with a real BullMQ worker', () => {
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  afterAll(() => redis.quit());

  it('takes no job while an adopted run holds the only slot, and runs the queue once it ends', async () => {
    const name = uniqueName('slots');
    const queue = new Queue(name, { connection: redis });
    await queue.add('run', { n: 1 });
    await queue.add('run', { n: 2 });
    const slots = new RunSlots(1);
    let endAdopted = () => undefined as void;
    slots.adopt(new Promise<void>((resolve) => (endAdopted = resolve)));
    const done: number[] = [];
    const finished = new Promise<void>((resolve) => {
      const worker = new Worker<{ n: number }>(
        name,
        (job) => slots.job(async () => void done.push(job.data.n)),
        { connection: redis, autorun: false },
      );
      worker.on('completed', () => {
        if (done.length === 2) void worker.close().then(resolve);
      });
      slots.attach(worker);
      expect(worker.isPaused()).toBe(true);
      expect(worker.isRunning()).toBe(false);
    });
    expect(await queue.getWaitingCount()).toBe(2);
    endAdopted();
    await finished;
    expect(done.sort()).toEqual([1, 2]);
    await queue.obliterate({ force: true });
    await queue.close();
  });

  // The rolling-upgrade failure: long jobs, and an AdoptRuns ask every tick. An ask must not shrink the worker below
  // its running jobs, or BullMQ waits for one of them to end before it claims the next job.
  it('keeps claiming jobs up to RUNNER_CONCURRENCY while adoption asks are in flight every tick', async () => {
    const name = uniqueName('slots');
    const queue = new Queue(name, { connection: redis });
    const slots = new RunSlots(5);
    const started: number[] = [];
    let endJobs = () => undefined as void;
    const jobsEnd = new Promise<void>((resolve) => (endJobs = resolve));
    const worker = new Worker<{ n: number }>(
      name,
      (job) => slots.job(async () => (started.push(job.data.n), await jobsEnd)),
      { connection: redis, autorun: false },
    );
    slots.attach(worker);
    // The first ask stays unanswered until told; every later one answers at once, with nothing to adopt.
    let asks = 0;
    let answer = () => undefined as void;
    const firstAnswer = new Promise<void>((resolve) => (answer = resolve));
    const take = async () => (++asks === 1 ? await firstAnswer : undefined, []);
    let adoption: { stop(): Promise<void> } | undefined;
    try {
      await queue.add('run', { n: 1 });
      await until(() => started.length === 1, 'the first job started');
      adoption = adoptLeasedRuns(take, (e) => slots.adopt(e), slots, log, 1);
      await until(() => asks === 1, 'an ask in flight');
      await queue.add('run', { n: 2 });
      await until(() => started.length === 2, 'a job started during the ask');
      answer();
      await until(() => asks > 3, 'more asks');

      for (const n of [3, 4, 5]) await queue.add('run', { n });
      await until(() => started.length === 5, 'every slot holds a job');
      expect(started.sort()).toEqual([1, 2, 3, 4, 5]);
    } finally {
      answer();
      await adoption?.stop();
      endJobs();
      await worker.close();
    }
    await queue.obliterate({ force: true });
    await queue.close();
  });
});
