import * as grpc from '@grpc/grpc-js';
import { loadOrchestratorProto, type AuthServiceHandlers, type BlobServiceHandlers, type FactoryServiceHandlers, type HealthServiceHandlers, type RunServiceHandlers, type RunnerServiceHandlers, type ScheduleServiceHandlers, type WebhookIngressServiceHandlers, type ArtifactServiceHandlers, type WorkerServiceHandlers, type CatalogServiceHandlers, type AgentIdentityServiceHandlers } from '@conveyor/proto';

export interface OrchestratorHandlers {
  auth: AuthServiceHandlers;
  runs: Partial<RunServiceHandlers>; // transitional: tightened once every RPC is implemented
  runner: Partial<RunnerServiceHandlers>; // transitional
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

export async function startGrpcServer(handlers: OrchestratorHandlers, host: string, port: number): Promise<{ server: grpc.Server; port: number }> {
  const proto = loadOrchestratorProto();
  const server = new grpc.Server({ 'grpc.max_receive_message_length': 8 * 1024 * 1024 });
  server.addService(proto.AuthService.service, handlers.auth);
  server.addService(proto.RunService.service, handlers.runs as grpc.UntypedServiceImplementation);
  server.addService(proto.HealthService.service, handlers.health);
  server.addService(proto.BlobService.service, handlers.blobs);
  server.addService(proto.FactoryService.service, handlers.factories);
  server.addService(proto.WebhookIngressService.service, handlers.webhookIngress);
  server.addService(proto.ScheduleService.service, handlers.schedules);
  server.addService(proto.CatalogService.service, handlers.catalog);
  server.addService(proto.AgentIdentityService.service, handlers.identities);
  server.addService(proto.ArtifactService.service, handlers.artifacts);
  server.addService(proto.WorkerService.service, handlers.workers);
  server.addService(proto.RunnerService.service, handlers.runner as grpc.UntypedServiceImplementation);
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
