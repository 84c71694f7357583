import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { REDIS_URL, uniqueName } from '@conveyor/testing';
import { RunSlots } from './run-slots';

// The runner's real BullMQ worker over a real Redis, driven by its slots: paused while adopted runs hold every slot,
// taking jobs again once one ends.
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
});
