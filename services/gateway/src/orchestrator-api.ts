import {
  Metadata,
  type ChannelCredentials,
  type ClientReadableStream,
  type ServiceError,
} from '@grpc/grpc-js';
import { fromGrpcError } from '@conveyor/errors';
import {
  callRpc,
  createOrchestratorClients,
  type OrchestratorClients,
  type RunEventMessage__Output,
  type WatchRunEventsRequest,
  type RequestOf,
  type ResponseOf,
  type RpcNames,
  type ServiceClients,
} from '@conveyor/proto';

/** The gateway's only way to the domain: a deadline on every call and one mapping of gRPC failures to AppErrors. */
export class OrchestratorApi {
  private readonly clients: OrchestratorClients;
  private readonly streams = new Set<ClientReadableStream<unknown>>();

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

  /** The run's events after a sequence, then live ones, until cancelled; no deadline (it lives as long as its viewer). */
  watchRunEvents(
    request: WatchRunEventsRequest,
    requestId?: string,
  ): ClientReadableStream<RunEventMessage__Output> {
    const metadata = new Metadata();
    if (requestId) metadata.set('x-request-id', requestId);
    const stream = this.clients.runs.WatchRunEvents(request, metadata);
    this.streams.add(stream);
    stream.on('close', () => this.streams.delete(stream));
    return stream;
  }

  /** Shutdown: open watch streams end (their SSE responses with them), so the HTTP server can drain. */
  cancelStreams(): void {
    for (const stream of this.streams) stream.cancel();
  }

  close(): void {
    this.clients.close();
  }
}
