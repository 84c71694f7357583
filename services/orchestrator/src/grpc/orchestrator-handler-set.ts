import type {
  AgentIdentityServiceHandlers,
  ArtifactServiceHandlers,
  AuthServiceHandlers,
  BlobServiceHandlers,
  CatalogServiceHandlers,
  EventEndpointServiceHandlers,
  IntegrationServiceHandlers,
  FactoryServiceHandlers,
  HealthServiceHandlers,
  RunnerServiceHandlers,
  RunServiceHandlers,
  ScheduleServiceHandlers,
  WebhookIngressServiceHandlers,
  WorkerServiceHandlers,
} from '@conveyor/proto';

/** The handlers of every service the orchestrator serves, one entry per proto service (the server, guard and permission table all key on it). */
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
  events: EventEndpointServiceHandlers;
  integrations: IntegrationServiceHandlers;
}
