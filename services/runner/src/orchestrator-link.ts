import type { ChannelCredentials, ServiceError } from '@grpc/grpc-js';
import { AppError, fromGrpcError } from '@conveyor/errors';
import {
  callRpc,
  createOrchestratorClients,
  type OrchestratorClients,
  type RequestOf,
  type ResponseOf,
  type RpcNames,
  type ServiceClients,
} from '@conveyor/proto';

type Runner = ServiceClients['runner'];

/** The runner's only channel to the platform: the RunnerService RPCs with deadlines and typed errors. */
export class OrchestratorLink {
  private readonly clients: OrchestratorClients;

  constructor(address: string, credentials: ChannelCredentials) {
    this.clients = createOrchestratorClients(address, credentials);
  }

  async call<M extends RpcNames<Runner>>(
    method: M,
    request: RequestOf<Runner[M]>,
    deadlineMs = 10_000,
  ): Promise<ResponseOf<Runner[M]>> {
    try {
      return await callRpc(this.clients, 'runner', method, request, { deadlineMs });
    } catch (err) {
      throw err instanceof AppError ? err : fromGrpcError(err as ServiceError);
    }
  }

  /** Used by readiness: the orchestrator answers and is ready. */
  async healthy(): Promise<boolean> {
    const res = await callRpc(this.clients, 'health', 'Check', {}, { deadlineMs: 2000 });
    return res.ready;
  }

  close(): void {
    this.clients.close();
  }
}
