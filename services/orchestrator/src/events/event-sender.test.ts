import net from 'node:net';
import { once } from 'node:events';
import { startEventReceiver } from '@conveyor/testing';
import { EventSender, parseRetryAfter } from './event-sender';

describe('EventSender', () => {
  const sender = new EventSender(2);
  afterAll(() => sender.close());

  it('connects to the address the egress policy checked, not to whatever DNS answers for the name now', async () => {
    const rx = await startEventReceiver();
    try {
      // No DNS knows this name: the request can only arrive through the pinned address.
      const url = new URL(rx.url.replace('127.0.0.1', 'hooks.never-resolves.invalid'));
      const sent = sender.send(url, '127.0.0.1', { 'webhook-id': 'msg_1' }, '{"a":1}', 10_000);
      const received = await rx.next();
      expect(received.headers).toMatchObject({
        host: url.host,
        'webhook-id': 'msg_1',
        'content-type': 'application/json',
      });
      expect(received.body).toBe('{"a":1}');
      received.respond(503, { 'retry-after': '7' });
      expect(await sent).toMatchObject({ statusCode: 503, retryAfterMs: 7000 });
    } finally {
      rx.close();
    }
  });

  it('reports a refused connection as an error without a status', async () => {
    const rx = await startEventReceiver();
    rx.close();
    const result = await sender.send(new URL(rx.url), '127.0.0.1', {}, '{}', 10_000);
    expect(result.statusCode).toBeUndefined();
    expect(result.error).toBe('connection refused');
  });

  /** A TCP service on loopback that does `onConnection` with every connection; its port. */
  const service = async (onConnection: (socket: net.Socket) => void) => {
    const server = net.createServer(onConnection);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return { server, port: (server.address() as net.AddressInfo).port };
  };

  it.each([
    [
      'a TLS handshake with a service that does not speak TLS',
      'https',
      (s: net.Socket) => s.end('SSH-2.0-OpenSSH_9.6\r\n'),
      'tls failure',
    ],
    ['a connection the service resets', 'http', (s: net.Socket) => s.resetAndDestroy(), 'connection reset'],
    ['a service that never answers', 'http', () => undefined, 'timeout'],
  ] as const)(
    'reports %s as a stable class, without the driver text',
    async (_what, scheme, onConnection, expected) => {
      const { server, port } = await service(onConnection);
      try {
        const result = await sender.send(
          new URL(`${scheme}://127.0.0.1:${port}/hook`),
          '127.0.0.1',
          {},
          '{}',
          500,
        );
        expect(result).toEqual({ error: expected, latencyMs: expect.any(Number) });
      } finally {
        server.close();
      }
    },
  );

  it('reads Retry-After as seconds or an HTTP date', () => {
    const now = Date.parse('2026-11-25T20:00:00Z');
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter('Wed, 25 Nov 2026 20:01:00 GMT', now)).toBe(60_000);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });
});
