import net from 'node:net';
import { once } from 'node:events';
import { apiCall, createMember, startPlatform, type Json, type RunningPlatform } from '@conveyor/testing';

jest.setTimeout(120_000);

/** A TCP service on loopback that greets like an SSH server: not TLS, and says what it is. Counts its connections. */
async function internalService(): Promise<{ port: number; connections: () => number; close: () => void }> {
  let connections = 0;
  const server = net.createServer((socket) => {
    connections++;
    socket.on('error', () => undefined);
    socket.end('SSH-2.0-OpenSSH_9.6p1 Debian-internal\r\n');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as net.AddressInfo).port,
    connections: () => connections,
    close: () => server.close(),
  };
}

/**
 * Issue 34 item 5: an operator's EGRESS_ALLOWED_ADDRESSES entry opens one port of an internal address, not all of
 * them, and what a member reads of an endpoint's attempts is a stable error class, never the TLS library's text
 * about what listens there.
 */
describe("issue 34.5: event endpoints' egress is per address:port, attempt errors are stable classes", () => {
  let platform: RunningPlatform;
  let allowed: Awaited<ReturnType<typeof internalService>>;
  let other: Awaited<ReturnType<typeof internalService>>;
  let memberKey: string;

  beforeAll(async () => {
    allowed = await internalService();
    other = await internalService();
    platform = await startPlatform({
      withRunner: false,
      env: { EGRESS_ALLOWED_ADDRESSES: `127.0.0.1:${allowed.port}`, EVENT_RETRY_SCHEDULE_MS: '0' },
    });
    memberKey = (await createMember(platform)).key;
  });

  afterAll(async () => {
    await platform?.stop();
    allowed?.close();
    other?.close();
  });

  it('another port of an allowed internal address is refused, and never connected to', async () => {
    const created = await apiCall(platform, 'POST', '/event-endpoints', {
      url: `https://127.0.0.1:${other.port}/hook`,
      event_types: ['*'],
    });
    expect(created.status).toBe(400);
    expect(created.body.detail).toMatch(/may not reach on port/);
    expect(other.connections()).toBe(0);
  });

  it("an attempt on the allowed port reports 'tls failure' to a member, with nothing of what answered", async () => {
    const created = await apiCall(platform, 'POST', '/event-endpoints', {
      url: `https://127.0.0.1:${allowed.port}/hook`,
      event_types: ['*'],
    });
    expect(created.status).toBe(201);
    const id = created.body.endpoint_id as string;
    expect((await apiCall(platform, 'POST', '/agent/run', { prompt: 'emit run.queued' })).status).toBe(200);

    let attempts: Json[] = [];
    for (const deadline = Date.now() + 30_000; attempts.length === 0 && Date.now() < deadline;) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      const listed = await apiCall(platform, 'GET', `/event-endpoints/${id}/attempts`, undefined, memberKey);
      expect(listed.status).toBe(200);
      attempts = listed.body.attempts as Json[];
    }
    expect(allowed.connections()).toBeGreaterThan(0);
    expect(attempts.length).toBeGreaterThan(0);
    for (const attempt of attempts)
      expect(attempt).toMatchObject({ status_code: null, error: 'tls failure' });
    expect(JSON.stringify(attempts)).not.toMatch(/ssl|openssh|eproto|version|routines|debian/i);
  });
});
