import { chmod, rm } from 'node:fs/promises';
import net from 'node:net';

/**
 * Connected pairs of unix sockets, made by connecting to the runner's own listener (Node has no socketpair): the near
 * end stays with the runner, the far end is handed to the privileged helper as a sandboxed process's stdin, stdout or
 * stderr. One connection at a time, so the next accepted one is the pair of the pending connect.
 */
export class SocketPairs {
  private queue: Promise<unknown> = Promise.resolve();
  private accept: ((near: net.Socket) => void) | undefined;

  private constructor(
    private readonly server: net.Server,
    private readonly file: string,
  ) {
    server.on('connection', (near) => {
      const accept = this.accept;
      this.accept = undefined;
      if (accept) accept(near);
      else near.destroy();
    });
  }

  /** Listens at `file`, which only this process's user may connect to. */
  static async listen(file: string): Promise<SocketPairs> {
    await rm(file, { force: true });
    const server = net.createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(file, resolve);
    });
    await chmod(file, 0o600);
    server.unref();
    return new SocketPairs(server, file);
  }

  pair(): Promise<{ near: net.Socket; far: net.Socket }> {
    const made = this.queue.then(
      () =>
        new Promise<{ near: net.Socket; far: net.Socket }>((resolve, reject) => {
          const accepted = new Promise<net.Socket>((r) => (this.accept = r));
          const far = net.connect(this.file);
          far.once('error', reject);
          far.once('connect', () => void accepted.then((near) => resolve({ near, far })));
        }),
    );
    this.queue = made.catch(() => undefined);
    return made;
  }

  async close(): Promise<void> {
    await new Promise((resolve) => this.server.close(resolve));
    await rm(this.file, { force: true });
  }
}
