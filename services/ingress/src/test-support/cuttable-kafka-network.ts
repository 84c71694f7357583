import net from 'node:net';
import type { ISocketFactory } from 'kafkajs';

/**
 * kafkajs sockets that a test can cut: every open connection to the broker is destroyed and new ones are refused
 * (ECONNREFUSED), exactly what the client sees when the broker stops, without stopping the shared broker.
 */
export class CuttableKafkaNetwork {
  private down = false;
  private readonly sockets = new Set<net.Socket>();

  readonly socketFactory: ISocketFactory = ({ host, port, onConnect }) => {
    if (this.down) {
      const refused = new net.Socket();
      setImmediate(() =>
        refused.destroy(
          Object.assign(new Error(`connect ECONNREFUSED ${host}:${port} (simulated outage)`), {
            code: 'ECONNREFUSED',
          }),
        ),
      );
      return refused;
    }
    const socket = net.connect({ host, port }, onConnect);
    socket.setKeepAlive(true, 60_000);
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
    return socket;
  };

  /** Like a broker that stops: open connections are reset (what the client sees from a killed broker). */
  cut(): void {
    this.down = true;
    for (const socket of this.sockets)
      socket.destroy(Object.assign(new Error('read ECONNRESET (simulated outage)'), { code: 'ECONNRESET' }));
  }

  restore(): void {
    this.down = false;
  }
}
