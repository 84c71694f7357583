import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The ingress benchmark's baseline, in its own process: read the body, answer 202 with a small JSON body. */
const server = createServer((req, res) => {
  req.on('data', () => undefined);
  req.on('end', () => {
    res.writeHead(202, { 'content-type': 'application/json' });
    res.end('{"delivery_id":"bare"}');
  });
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${(server.address() as AddressInfo).port}\n`);
});
