import * as grpc from '@grpc/grpc-js';
import { loadOrchestratorProto, ORCHESTRATOR_SERVICES, type OrchestratorProto, type AuthServiceHandlers, type BlobServiceHandlers, type FactoryServiceHandlers, type HealthServiceHandlers, type RunServiceHandlers, type RunnerServiceHandlers, type ScheduleServiceHandlers, type WebhookIngressServiceHandlers, type ArtifactServiceHandlers, type WorkerServiceHandlers, type CatalogServiceHandlers, type AgentIdentityServiceHandlers } from '@conveyor/proto';

export interface OrchestratorHandlers {
  auth: AuthServiceHandlers;
  runs: RunServiceHandlers;
  runner: RunnerServiceHandlers;
  health: HealthServiceHandlers;
  blobs: BlobServiceHandlers;
  factories: FactoryServiceHandlers;
  webhookIngress: WebhookIngressServiceHandlers;
  schedules: ScheduleServiceHandlers;
  catalog: CatalogServiceHandlers;
  identities: AgentIdentityServiceHandlers;
  artifacts: ArtifactServiceHandlers;
  workers: WorkerServiceHandlers;
}

// Every service the clients know is served here, under the same names.
const SERVICE_NAMES = ORCHESTRATOR_SERVICES satisfies Record<keyof OrchestratorHandlers, keyof OrchestratorProto>;

export async function startGrpcServer(handlers: OrchestratorHandlers, host: string, port: number): Promise<{ server: grpc.Server; port: number }> {
  const proto = loadOrchestratorProto();
  const server = new grpc.Server({ 'grpc.max_receive_message_length': 8 * 1024 * 1024 });
  for (const [key, name] of Object.entries(SERVICE_NAMES) as Array<[keyof OrchestratorHandlers, keyof OrchestratorProto]>) {
    const service = proto[name] as unknown as grpc.ServiceClientConstructor;
    server.addService(service.service, handlers[key] as unknown as grpc.UntypedServiceImplementation);
  }
  const boundPort = await new Promise<number>((resolve, reject) => {
    server.bindAsync(`${host}:${port}`, grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p)));
  });
  return { server, port: boundPort };
}

/** Lets in-flight calls finish, but never longer than the deadline. */
export function stopGrpcServer(server: grpc.Server, deadlineMs: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      server.forceShutdown();
      resolve();
    }, deadlineMs);
    server.tryShutdown(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}
