import { Metadata, type ChannelCredentials, type ServiceError } from '@grpc/grpc-js';
import { fromGrpcError } from '@conveyor/errors';
import { callRpc, createOrchestratorClients, type OrchestratorClients, type RequestOf, type ResponseOf, type RpcNames, type ServiceClients } from '@conveyor/proto';

/** The gateway's only way to the domain: a deadline on every call and one mapping of gRPC failures to AppErrors. */
export class OrchestratorApi {
  private readonly clients: OrchestratorClients;

  constructor(
    address: string,
    credentials: ChannelCredentials,
    private readonly deadlineMs: number,
  ) {
    this.clients = createOrchestratorClients(address, credentials);
  }

  async call<S extends keyof ServiceClients, M extends RpcNames<ServiceClients[S]>>(
    service: S,
    method: M,
    request: RequestOf<ServiceClients[S][M]>,
    requestId?: string,
  ): Promise<ResponseOf<ServiceClients[S][M]>> {
    const metadata = new Metadata();
    if (requestId) metadata.set('x-request-id', requestId);
    try {
      return await callRpc(this.clients, service, method, request, { deadlineMs: this.deadlineMs, metadata });
    } catch (err) {
      throw fromGrpcError(err as ServiceError);
    }
  }

  close(): void {
    this.clients.close();
  }
}
