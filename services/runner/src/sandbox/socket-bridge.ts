import net from 'node:net';
import { unlink } from 'node:fs/promises';
import type { ListenAddress } from './egress-proxy';
import { createRouteForwarder } from './route-forwarder';
import type { SandboxEndpoint } from './run-sandbox';

/**
 * A listener through which a policy endpoint reaches into a sandbox: an HTTP forwarder of the endpoint's routes
 * alone when it declares some (harness support), else a pipe of every connection to the target (the model proxy,
 * which checks each request itself).
 */
export class SocketBridge {
  private readonly sockets = new Set<net.Socket>();
  private readonly server: net.Server;

  private constructor({ target, routes }: SandboxEndpoint) {
    if (routes) {
      this.server = createRouteForwarder(target, routes);
      this.server.on('connection', (s: net.Socket) => {
        this.sockets.add(s);
        s.once('close', () => this.sockets.delete(s));
      });
      return;
    }
    this.server = net.createServer((client) => {
      const upstream = net.connect(target.port, target.host);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.once('close', () => this.sockets.delete(s));
        s.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream).pipe(client);
    });
  }

  /** `listenOn`: a unix socket path (local backend) or a TCP address (container backends). */
  static async listen(listenOn: string | ListenAddress, endpoint: SandboxEndpoint): Promise<SocketBridge> {
    const bridge = new SocketBridge(endpoint);
    if (typeof listenOn === 'string') await unlink(listenOn).catch(() => undefined);
    await new Promise<void>((resolve, reject) => {
      bridge.server.once('error', reject);
      bridge.server.listen(listenOn, resolve);
    });
    return bridge;
  }

  get port(): number {
    return (this.server.address() as net.AddressInfo).port;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
