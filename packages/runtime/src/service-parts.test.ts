import { createLogger } from '@conveyor/logger';
import { Readiness } from './readiness';
import { ServiceParts } from './service-parts';

const logger = createLogger({ service: 'service-parts-test', level: 'silent' });

describe('ServiceParts', () => {
  it('stops intake first in start order, then the rest in reverse start order, even past a failing stop', async () => {
    const stopped: string[] = [];
    const parts = new ServiceParts(new Readiness());
    const part = (name: string, intake = false) => ({
      name,
      intake,
      stop: () => {
        stopped.push(name);
        if (name === 'queue') throw new Error('already closed');
      },
    });
    for (const p of [
      part('db'),
      part('queue'),
      part('feed', true),
      part('loop'),
      part('workers', true),
      part('grpc', true),
    ])
      await parts.add(p);
    await parts.stop(logger);
    expect(stopped).toEqual(['feed', 'workers', 'grpc', 'loop', 'queue', 'db']);
  });

  it('registers a part before starting it, so a start that fails is still stopped', async () => {
    const stopped: string[] = [];
    const parts = new ServiceParts(new Readiness());
    await parts.add({ name: 'db', stop: () => stopped.push('db') });
    await expect(
      parts.add({
        name: 'feed',
        start: () => Promise.reject(new Error('cannot listen')),
        stop: () => stopped.push('feed'),
      }),
    ).rejects.toThrow('cannot listen');
    await parts.stop(logger);
    expect(stopped).toEqual(['feed', 'db']);
  });

  it("puts each part's check and loop health in readiness, and marks it stopping on stop", async () => {
    const readiness = new Readiness();
    const parts = new ServiceParts(readiness);
    await parts.add({ name: 'postgres', ready: async () => undefined, stop: () => undefined });
    await parts.add({
      name: 'sweep',
      health: () => ({ ok: false, failures: 2 }),
      stop: () => undefined,
    });
    expect(await readiness.report()).toEqual({
      ready: true,
      checks: { postgres: { ok: true } },
      loops: { sweep: { ok: false, failures: 2 } },
    });
    await parts.stop(logger);
    expect((await readiness.report()).ready).toBe(false);
  });
});
