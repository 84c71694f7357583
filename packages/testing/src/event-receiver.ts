import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request an event receiver got; the sender waits until the test answers it. */
export interface ReceivedEvent {
  headers: http.IncomingHttpHeaders;
  body: string;
  respond(status: number, headers?: Record<string, string>): void;
}

export interface EventReceiver {
  url: string;
  /** The next request, in arrival order. */
  next(): Promise<ReceivedEvent>;
  close(): void;
}

/**
 * An event endpoint on loopback for tests of outgoing events (docs/events.md): each request waits, unanswered,
 * until the test calls `respond`, so a test scripts 2xx, 503 or 410, or holds a request open to play a slow endpoint.
 */
export async function startEventReceiver(): Promise<EventReceiver> {
  const arrived: ReceivedEvent[] = [];
  const waiting: Array<(r: ReceivedEvent) => void> = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const received: ReceivedEvent = {
        headers: req.headers,
        body,
        respond: (status, headers = {}) => res.writeHead(status, headers).end(),
      };
      const waiter = waiting.shift();
      if (waiter) waiter(received);
      else arrived.push(received);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    next: () =>
      new Promise((resolve) => {
        const first = arrived.shift();
        if (first) resolve(first);
        else waiting.push(resolve);
      }),
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}
