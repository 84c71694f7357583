import * as grpc from '@grpc/grpc-js';
import net from 'node:net';
import type { ISocketFactory } from 'kafkajs';
import {
  loadOrchestratorProto,
  readTlsMaterial,
  type GrpcTlsSettings,
  type ResolveWebhookResponse,
  type WebhookIngressServiceHandlers,
} from '@conveyor/proto';

/**
 * A stand-in for the orchestrator's WebhookIngressService on a real socket (127.0.0.1:0), for ingress tests that
 * must not depend on the orchestrator service. The test edits `webhooks` as the orchestrator would.
 */
export class FakeWebhookDirectory {
  readonly webhooks = new Map<string, ResolveWebhookResponse>();
  lookups = 0;
  private server: grpc.Server | undefined;

  /** Listens with the orchestrator's certificate, asking for client certificates as the real one does. */
  async start(tls: GrpcTlsSettings): Promise<string> {
    const own = readTlsMaterial(tls);
    const proto = loadOrchestratorProto();
    const server = new grpc.Server();
    const handlers: WebhookIngressServiceHandlers = {
      ResolveWebhook: (call, callback) => {
        this.lookups++;
        callback(null, this.webhooks.get(call.request.webhook_uid) ?? { found: false });
      },
    };
    server.addService(proto.WebhookIngressService.service, handlers);
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync(
        '127.0.0.1:0',
        grpc.ServerCredentials.createSsl(own.ca, [{ cert_chain: own.cert, private_key: own.key }], true),
        (err, p) => (err ? reject(err) : resolve(p)),
      ),
    );
    this.server = server;
    return `127.0.0.1:${port}`;
  }

  stop(): void {
    this.server?.forceShutdown();
  }
}

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
