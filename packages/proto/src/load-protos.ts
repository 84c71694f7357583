import { readdirSync } from 'node:fs';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import type { ProtoGrpcType as AuthProto } from './gen/auth';
import type { ProtoGrpcType as BlobsProto } from './gen/blobs';
import type { ProtoGrpcType as HealthProto } from './gen/health';
import type { ProtoGrpcType as RunnerProto } from './gen/runner';
import type { ProtoGrpcType as RunsProto } from './gen/runs';
import type { ProtoGrpcType as SchedulesProto } from './gen/schedules';
import type { ProtoGrpcType as WebhooksProto } from './gen/webhooks';
import type { ProtoGrpcType as CatalogProto } from './gen/catalog';
import type { ProtoGrpcType as IdentitiesProto } from './gen/identities';
import type { ProtoGrpcType as ArtifactsProto } from './gen/artifacts';
import type { ProtoGrpcType as WorkersProto } from './gen/workers';
import type { ProtoGrpcType as EventsProto } from './gen/events';
import type { ProtoGrpcType as IntegrationsProto } from './gen/integrations';
import type { ProtoGrpcType as SlackAppsProto } from './gen/slack_apps';

/** protos/ at the repo root is the one source of truth; images copy it to the same relative place. */
export const PROTO_DIR = process.env.CONVEYOR_PROTO_DIR ?? path.resolve(__dirname, '../../../protos');

/** Every file of the package, so a new service needs no loader change. */
function protoFiles(): string[] {
  const dir = path.join(PROTO_DIR, 'conveyor/orchestrator/v1');
  return readdirSync(dir)
    .filter((f) => f.endsWith('.proto'))
    .sort()
    .map((f) => `conveyor/orchestrator/v1/${f}`);
}

/** One options object shared by every loader, matching the flags the types were generated with. */
export const PROTO_LOADER_OPTIONS: protoLoader.Options = {
  keepCase: true,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
  includeDirs: [PROTO_DIR],
};

// One entry per proto file: the generated ProtoGrpcType of each.
type AllProtos = AuthProto &
  HealthProto &
  RunsProto &
  RunnerProto &
  BlobsProto &
  WebhooksProto &
  SchedulesProto &
  CatalogProto &
  IdentitiesProto &
  ArtifactsProto &
  WorkersProto &
  EventsProto &
  IntegrationsProto &
  SlackAppsProto;
export type OrchestratorProto = AllProtos['conveyor']['orchestrator']['v1'];

let cached: OrchestratorProto | undefined;

export function loadOrchestratorProto(): OrchestratorProto {
  if (!cached) {
    const definition = protoLoader.loadSync(protoFiles(), PROTO_LOADER_OPTIONS);
    const loaded = grpc.loadPackageDefinition(definition) as unknown as AllProtos;
    cached = loaded.conveyor.orchestrator.v1;
  }
  return cached;
}
