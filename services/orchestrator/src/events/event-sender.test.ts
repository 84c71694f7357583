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
    expect(result.error).toMatch(/ECONNREFUSED/);
  });

  it('reads Retry-After as seconds or an HTTP date', () => {
    const now = Date.parse('2026-11-25T20:00:00Z');
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter('Wed, 25 Nov 2026 20:01:00 GMT', now)).toBe(60_000);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });
});
