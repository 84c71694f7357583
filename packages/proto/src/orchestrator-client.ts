import * as grpc from '@grpc/grpc-js';
import type { AuthServiceClient } from './gen/conveyor/orchestrator/v1/AuthService';
import type { BlobServiceClient } from './gen/conveyor/orchestrator/v1/BlobService';
import type { HealthServiceClient } from './gen/conveyor/orchestrator/v1/HealthService';
import type { RunnerServiceClient } from './gen/conveyor/orchestrator/v1/RunnerService';
import type { RunServiceClient } from './gen/conveyor/orchestrator/v1/RunService';
import type { ScheduleServiceClient } from './gen/conveyor/orchestrator/v1/ScheduleService';
import type { FactoryServiceClient } from './gen/conveyor/orchestrator/v1/FactoryService';
import type { WebhookIngressServiceClient } from './gen/conveyor/orchestrator/v1/WebhookIngressService';
import type { CatalogServiceClient } from './gen/conveyor/orchestrator/v1/CatalogService';
import type { AgentIdentityServiceClient } from './gen/conveyor/orchestrator/v1/AgentIdentityService';
import type { ArtifactServiceClient } from './gen/conveyor/orchestrator/v1/ArtifactService';
import type { WorkerServiceClient } from './gen/conveyor/orchestrator/v1/WorkerService';
import type { EventEndpointServiceClient } from './gen/conveyor/orchestrator/v1/EventEndpointService';
import type { IntegrationServiceClient } from './gen/conveyor/orchestrator/v1/IntegrationService';
import { loadOrchestratorProto, type OrchestratorProto } from './load-protos';

/**
 * Transparent retries on UNAVAILABLE come from grpc-js's own retry support (gRFC A6) via the service config,
 * so every method of every service retries the same way without hand-written loops. Only UNAVAILABLE: the
 * request never reached a handler, so retrying cannot apply a write twice.
 */
const SERVICE_CONFIG = {
  methodConfig: [
    {
      name: [{}],
      retryPolicy: {
        maxAttempts: 4,
        initialBackoff: '0.1s',
        maxBackoff: '1s',
        backoffMultiplier: 2,
        retryableStatusCodes: ['UNAVAILABLE'],
      },
    },
  ],
};

/** Property name → generated service name, shared by the clients and the orchestrator's server; one line per service. */
export const ORCHESTRATOR_SERVICES = {
  auth: 'AuthService',
  runs: 'RunService',
  health: 'HealthService',
  runner: 'RunnerService',
  blobs: 'BlobService',
  factories: 'FactoryService',
  webhookIngress: 'WebhookIngressService',
  schedules: 'ScheduleService',
  catalog: 'CatalogService',
  identities: 'AgentIdentityService',
  artifacts: 'ArtifactService',
  workers: 'WorkerService',
  events: 'EventEndpointService',
  integrations: 'IntegrationService',
} as const satisfies Record<string, keyof OrchestratorProto>;

export interface OrchestratorClients {
  auth: AuthServiceClient;
  runs: RunServiceClient;
  health: HealthServiceClient;
  runner: RunnerServiceClient;
  blobs: BlobServiceClient;
  factories: FactoryServiceClient;
  webhookIngress: WebhookIngressServiceClient;
  schedules: ScheduleServiceClient;
  catalog: CatalogServiceClient;
  identities: AgentIdentityServiceClient;
  artifacts: ArtifactServiceClient;
  workers: WorkerServiceClient;
  events: EventEndpointServiceClient;
  integrations: IntegrationServiceClient;
  close(): void;
}

/** Clients of every service over one channel; `credentials` come from grpc-credentials.ts (there is no plain-text mode). */
export function createOrchestratorClients(
  address: string,
  credentials: grpc.ChannelCredentials,
): OrchestratorClients {
  const proto = loadOrchestratorProto();
  // One channel shared by every stub.
  const channel = new grpc.Channel(address, credentials, {
    'grpc.service_config': JSON.stringify(SERVICE_CONFIG),
    'grpc.enable_retries': 1,
    'grpc.keepalive_time_ms': 30_000,
    // Blobs (raw transcripts) and whole conversations come back in one unary response; grpc-js defaults to 4 MB.
    'grpc.max_receive_message_length': 64 * 1024 * 1024,
  });
  const stubs = Object.fromEntries(
    Object.entries(ORCHESTRATOR_SERVICES).map(([key, name]) => {
      const Ctor = proto[name] as unknown as grpc.ServiceClientConstructor;
      return [key, new Ctor(address, credentials, { channelOverride: channel })];
    }),
  ) as unknown as Omit<OrchestratorClients, 'close'>;
  return { ...stubs, close: () => channel.close() };
}
