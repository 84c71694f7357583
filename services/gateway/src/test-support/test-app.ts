import { credentials } from '@grpc/grpc-js';
import type { Redis } from 'ioredis';
import { createLogger } from '@conveyor/logger';
import { Readiness } from '@conveyor/runtime';
import { buildApp } from '../app';
import { loadGatewayConfig } from '../config';
import { OrchestratorApi } from '../orchestrator-api';

/**
 * The whole gateway app over an orchestrator address nothing listens on: for tests of what the app answers before
 * (or without) asking the orchestrator. Close `api` afterwards.
 */
export function testApp(redis: Redis) {
  const api = new OrchestratorApi('127.0.0.1:1', credentials.createInsecure(), 1000);
  const app = buildApp({
    config: loadGatewayConfig({
      GRPC_TLS_CA_FILE: 'unused',
      GRPC_TLS_CERT_FILE: 'unused',
      GRPC_TLS_KEY_FILE: 'unused',
    }),
    logger: createLogger({ service: 'test', level: 'silent' }),
    api,
    redis,
    readiness: new Readiness(),
    publicUrl: () => 'http://x',
  });
  return { app, api };
}
