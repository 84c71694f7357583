import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { apiCall, startPlatform, type RunningPlatform } from '@conveyor/testing';

jest.setTimeout(120_000);

describe('finding 4: the platform’s own outbound fetches refuse loopback, private and link-local destinations after DNS', () => {
  let platform: RunningPlatform;
  let server: Server;
  let port: number;
  const requests: string[] = [];

  beforeAll(async () => {
    // Stands in for an internal service (or the cloud metadata endpoint): it records every request that reaches it.
    server = createServer((req, res) => {
      requests.push(`${req.method} ${req.headers.host} ${req.url}`);
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    // http is allowed here on purpose, so that what refuses these URLs is the address check, not the scheme.
    platform = await startPlatform({ withRunner: false, env: { GIT_ALLOWED_SCHEMES: 'https,http' } });
  });

  afterAll(async () => {
    await platform?.stop();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('skill discovery never reaches 127.0.0.1, localhost, [::1], IPv4-mapped loopback, 169.254.169.254 or private ranges', async () => {
    const urls = [
      `http://127.0.0.1:${port}/acme/loopback.git`,
      `http://localhost:${port}/acme/by-name.git`,
      `http://[::1]:${port}/acme/v6-loopback.git`,
      `http://[::ffff:127.0.0.1]:${port}/acme/mapped.git`,
      `http://169.254.169.254/latest/meta-data.git`,
      `https://10.0.0.1/acme/private.git`,
      `https://[fd00::1]/acme/unique-local.git`,
    ];
    const created = await apiCall(platform, 'POST', '/agent/environments', {
      name: 'ssrf',
      repositories: urls.map((url) => ({ url })),
    });
    expect(created.status).toBe(201);
    const listing = await apiCall(platform, 'GET', '/agent?refresh=true');
    expect(listing.status).toBe(200);
    expect(listing.body.agents).toEqual([]);
    expect(requests).toEqual([]);
    // Each refusal is logged with its reason (the orchestrator's output reaches us through a pipe: poll for it).
    const refusals = () =>
      platform
        .logs()
        .split('\n')
        .filter((line) => line.includes('may not reach')).length;
    for (const deadline = Date.now() + 10_000; refusals() < urls.length && Date.now() < deadline;)
      await new Promise((r) => setTimeout(r, 100));
    expect(refusals()).toBe(urls.length);
  });
});
