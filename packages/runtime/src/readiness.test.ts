import { Readiness } from './readiness';

describe('Readiness', () => {
  it('is ready only when every check passes and not stopping', async () => {
    const readiness = new Readiness().add('db', async () => undefined);
    expect((await readiness.report()).ready).toBe(true);
    readiness.add('redis', async () => {
      throw new Error('ECONNREFUSED');
    });
    const report = await readiness.report();
    expect(report.ready).toBe(false);
    expect(report.checks.redis).toEqual({ ok: false, error: 'ECONNREFUSED' });
  });

  it('times out slow checks and reports shutdown', async () => {
    const readiness = new Readiness().add('slow', () => new Promise<void>(() => undefined));
    const report = await readiness.report(20);
    expect(report.checks.slow?.error).toMatch(/timed out/);
    readiness.markStopping();
    expect((await readiness.report(20)).checks.shutdown).toEqual({ ok: false, error: 'shutting down' });
  });

  it("reports background loops' health without letting a failing loop gate readiness", async () => {
    const readiness = new Readiness()
      .add('db', async () => undefined)
      .observe('sweep', { health: () => ({ ok: false, failures: 3, error: 'boom' }) });
    expect(await readiness.report()).toEqual({
      ready: true,
      checks: { db: { ok: true } },
      loops: { sweep: { ok: false, failures: 3, error: 'boom' } },
    });
  });
});
