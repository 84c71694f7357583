import * as grpc from '@grpc/grpc-js';
import type { AuthServiceClient } from './gen/conveyor/orchestrator/v1/AuthService';
import type { HealthServiceClient } from './gen/conveyor/orchestrator/v1/HealthService';
import type { RunServiceClient } from './gen/conveyor/orchestrator/v1/RunService';
import { loadOrchestratorProto } from './load-protos';

/**
 * Transparent retries on UNAVAILABLE come from grpc-js's own retry support (gRFC A6) via the service config,
 * so every method retries the same way without hand-written loops. Only UNAVAILABLE: the request never reached
 * a handler, so retrying cannot apply a write twice.
 */
const SERVICE_CONFIG = {
  methodConfig: [
    {
      name: [{ service: 'conveyor.orchestrator.v1.AuthService' }, { service: 'conveyor.orchestrator.v1.RunService' }, { service: 'conveyor.orchestrator.v1.HealthService' }],
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

export interface OrchestratorClients {
  auth: AuthServiceClient;
  runs: RunServiceClient;
  health: HealthServiceClient;
  close(): void;
}

export function createOrchestratorClients(address: string): OrchestratorClients {
  const proto = loadOrchestratorProto();
  const credentials = grpc.credentials.createInsecure();
  const options: grpc.ChannelOptions = {
    'grpc.service_config': JSON.stringify(SERVICE_CONFIG),
    'grpc.enable_retries': 1,
    'grpc.keepalive_time_ms': 30_000,
  };
  // One channel shared by all stubs.
  const auth = new proto.AuthService(address, credentials, options);
  const channelOverride = auth.getChannel();
  const shared = { ...options, channelOverride } as grpc.ChannelOptions;
  const runs = new proto.RunService(address, credentials, shared);
  const health = new proto.HealthService(address, credentials, shared);
  return {
    auth,
    runs,
    health,
    close: () => auth.close(),
  };
}
