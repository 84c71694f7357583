import type { Server } from 'node:http';
import { createLogger } from '@conveyor/logger';
import { createMetricsRegistry } from '@conveyor/metrics';
import { Readiness } from './readiness';
import { closeServer, listen } from './http-server';
import { serviceShell, startShellServer } from './service-shell';

describe('the service shell, over a real socket', () => {
  const servers: Server[] = [];
  afterAll(() => Promise.all(servers.map(closeServer)));

  const serve = async (shell: Promise<{ server: Server; port: number }>) => {
    const { server, port } = await shell;
    servers.push(server);
    return (path: string, init?: RequestInit) => fetch(`http://127.0.0.1:${port}${path}`, init);
  };

  it('answers health, readiness and metrics, and counts no probe or scrape as traffic', async () => {
    let postgresUp = true;
    const readiness = new Readiness().add('postgres', async () => {
      if (!postgresUp) throw new Error('down');
    });
    const metrics = createMetricsRegistry('shell-test');
    const get = await serve(startShellServer({ readiness, metrics, port: 0, host: '127.0.0.1' }));

    expect(await (await get('/healthz')).json()).toEqual({ status: 'ok' });
    expect((await get('/readyz')).status).toBe(200);
    postgresUp = false;
    const notReady = await get('/readyz');
    expect(notReady.status).toBe(503);
    expect(await notReady.json()).toMatchObject({ status: 'not_ready' });
    // The probe's endpoint ignores a shared dependency: only draining takes this replica out.
    const local = await get('/readyz/local');
    expect(local.status).toBe(200);
    expect(await local.json()).toEqual({ status: 'ready', checks: {} });
    readiness.markStopping();
    postgresUp = true;
    expect((await get('/readyz')).status).toBe(503);
    expect((await get('/readyz/local')).status).toBe(503);

    expect((await get('/nowhere')).status).toBe(404);
    const scrape = await get('/metrics');
    expect(scrape.headers.get('content-type')).toContain('text/plain');
    const text = await scrape.text();
    expect(text).toMatch(/http_requests_total\{[^}]*route="unmatched"[^}]*\} 1/);
    expect(text).not.toMatch(/http_requests_total\{[^}]*route="\/(healthz|readyz|metrics)/);
  });

  it('names no framework, gives every request an ID, and believes no X-Forwarded-For unless told', async () => {
    const app = serviceShell({
      readiness: new Readiness(),
      metrics: createMetricsRegistry('shell-test-2'),
      logger: createLogger({ service: 'test', level: 'silent' }),
      trustProxy: 'false',
    });
    app.get('/ip', (req, res) => {
      res.json({ ip: req.ip });
    });
    const get = await serve(listen(app, 0, '127.0.0.1'));
    const res = await get('/ip', { headers: { 'x-forwarded-for': '203.0.113.9' } });
    expect(res.headers.get('x-powered-by')).toBeNull();
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(await res.json()).toEqual({ ip: '127.0.0.1' });
  });
});
