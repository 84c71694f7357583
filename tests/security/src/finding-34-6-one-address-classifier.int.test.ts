import net from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { once } from 'node:events';
import { EgressProxy } from '@conveyor/runner';
import { apiCall, startPlatform, type RunningPlatform } from '@conveyor/testing';

jest.setTimeout(120_000);

/**
 * Issue 34 item 6: one answer to "is this address public?". Every address form below is refused by the runner's
 * egress proxy (a sandbox's only way out) and by the orchestrator's egress (an event endpoint, which the platform
 * itself calls), both over real sockets. Before, the proxy's hand-written list let 6to4 and Teredo through, and the
 * orchestrator took IPv4-compatible ::a.b.c.d and other non-2000::/3 IPv6 for public unicast.
 */
const NOT_PUBLIC = [
  '127.0.0.1',
  '169.254.169.254',
  '10.0.0.1',
  '100.64.0.1',
  '::1',
  'fe80::1',
  'fd00::1',
  'fd00:ec2::254',
  '::ffff:127.0.0.1',
  '::ffff:a9fe:a9fe',
  '::127.0.0.1',
  '::a9fe:a9fe',
  '64:ff9b::7f00:1',
  '64:ff9b:1::a9fe:a9fe',
  '2002:7f00:1::1',
  '2002:a9fe:a9fe::1',
  '2001:0:4136:e378:8000:63bf:3fff:fdd2',
  '2001:db8::1',
  '4000::1',
];

/** IPv4 literals that are not dotted-decimal: URL parsing and getaddrinfo read them as the address they mean. */
const NON_CANONICAL = ['2130706433', '0x7f000001', '0x7f.1', '0177.0.0.1', '127.1', '0xa9.0xfe.0xa9.0xfe'];

describe('issue 34.6: the runner and the orchestrator refuse the same non-public addresses', () => {
  let platform: RunningPlatform;
  let proxy: EgressProxy;
  let socketDir: string;
  const decisions: Array<{ host: string; allowed: boolean }> = [];

  beforeAll(async () => {
    platform = await startPlatform({ withRunner: false });
    // An environment that allow-lists each literal: what refuses it must be the address check.
    // On a unix socket, as the local backend bridges it into a sandbox.
    socketDir = await mkdtemp(path.join(os.tmpdir(), 'egress-'));
    proxy = await EgressProxy.listen(
      path.join(socketDir, 'egress.sock'),
      { allowedHosts: [...NOT_PUBLIC, ...NON_CANONICAL], internalHosts: [] },
      ({ host, decision }) => decisions.push({ host, allowed: decision.allowed }),
    );
  });

  afterAll(async () => {
    await proxy?.close();
    await rm(socketDir, { recursive: true, force: true });
    await platform?.stop();
  });

  /** The proxy's answer to `CONNECT [address]:443`, as a sandboxed client sees it. */
  const connectThrough = async (address: string): Promise<string> => {
    const socket = net.connect(path.join(socketDir, 'egress.sock'));
    await once(socket, 'connect');
    const host = address.includes(':') ? `[${address}]` : address;
    socket.write(`CONNECT ${host}:443 HTTP/1.1\r\nHost: ${host}:443\r\n\r\n`);
    const [chunk] = (await once(socket, 'data')) as [Buffer];
    socket.destroy();
    return chunk.toString('utf8').split('\r\n')[0]!;
  };

  it.each(NOT_PUBLIC)('%s: the egress proxy answers 403 and never connects', async (address) => {
    expect(await connectThrough(address)).toBe('HTTP/1.1 403 Forbidden');
    expect(decisions.filter((d) => d.host.replace(/^\[|\]$/g, '') === address)).toEqual([
      { host: expect.any(String), allowed: false },
    ]);
  });

  it.each(NOT_PUBLIC)('%s: an event endpoint on it is refused with 400', async (address) => {
    const host = address.includes(':') ? `[${address}]` : address;
    const created = await apiCall(platform, 'POST', '/event-endpoints', {
      url: `https://${host}/hook`,
      event_types: ['*'],
    });
    expect(created.status).toBe(400);
    expect(created.body.detail).toMatch(/may not reach/);
  });

  it.each(NON_CANONICAL)(
    '%s: judged as the address it reaches, by the proxy and the orchestrator',
    async (literal) => {
      expect(await connectThrough(literal)).toBe('HTTP/1.1 403 Forbidden');
      const created = await apiCall(platform, 'POST', '/event-endpoints', {
        url: `https://${literal}/hook`,
        event_types: ['*'],
      });
      expect(created.status).toBe(400);
      expect(created.body.detail).toMatch(/may not reach/);
    },
  );
});
