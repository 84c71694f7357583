import * as grpc from '@grpc/grpc-js';
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
