import net from 'node:net';
import { unlink } from 'node:fs/promises';

/** A unix socket that pipes every connection to a TCP target: how a policy endpoint reaches into a sandbox. */
export class SocketBridge {
  private readonly sockets = new Set<net.Socket>();
  private readonly server: net.Server;

  private constructor(target: { host: string; port: number }) {
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

  static async listen(socketPath: string, target: { host: string; port: number }): Promise<SocketBridge> {
    const bridge = new SocketBridge(target);
    await unlink(socketPath).catch(() => undefined);
    await new Promise<void>((resolve, reject) => {
      bridge.server.once('error', reject);
      bridge.server.listen(socketPath, resolve);
    });
    return bridge;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
