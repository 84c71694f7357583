import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { initPki, serviceTlsEnv } from '@conveyor/pki';
import { mutualTlsCredentials, readTlsMaterial } from './grpc-credentials';
import { createOrchestratorClients } from './orchestrator-client';
import { loadOrchestratorProto } from './load-protos';
import { callRpc } from './typed-call';

describe('orchestrator clients against an in-process gRPC server on a real socket', () => {
  let server: grpc.Server;
  let port: number;
  let calls = 0;
  const pkiDir = mkdtempSync(path.join(os.tmpdir(), 'conveyor-proto-pki-'));
  let credentials: grpc.ChannelCredentials;

  beforeAll(async () => {
    await initPki(pkiDir, { services: ['orchestrator', 'gateway'] });
    credentials = mutualTlsCredentials(serviceTlsEnv(pkiDir, 'gateway'));
    const own = readTlsMaterial(serviceTlsEnv(pkiDir, 'orchestrator'));
    const proto = loadOrchestratorProto();
    server = new grpc.Server();
    server.addService(proto.HealthService.service, {
      Check: (_call: unknown, callback: grpc.sendUnaryData<unknown>) => {
        calls++;
        callback(null, { ready: true, checks: { postgres: 'ok' } });
      },
    });
    port = await new Promise<number>((resolve, reject) =>
      server.bindAsync(
        '127.0.0.1:0',
        grpc.ServerCredentials.createSsl(own.ca, [{ cert_chain: own.cert, private_key: own.key }], true),
        (err, p) => (err ? reject(err) : resolve(p)),
      ),
    );
  });

  afterAll(() => {
    server.forceShutdown();
  });

  it('loads every proto file and exposes a stub per service', () => {
    const proto = loadOrchestratorProto();
    for (const name of ['AuthService', 'RunService', 'RunnerService', 'HealthService'] as const) {
      expect(typeof proto[name]).toBe('function');
    }
  });

  it('makes typed unary calls with the shared channel over mutual TLS', async () => {
    const clients = createOrchestratorClients(`127.0.0.1:${port}`, credentials);
    try {
      const res = await callRpc(clients, 'health', 'Check', {});
      expect(res).toEqual({ ready: true, checks: { postgres: 'ok' } });
      expect(calls).toBe(1);
    } finally {
      clients.close();
    }
  });

  it('fails with UNAVAILABLE within the deadline when nothing listens', async () => {
    const clients = createOrchestratorClients('127.0.0.1:1', credentials);
    const started = Date.now();
    try {
      const err = (await callRpc(clients, 'health', 'Check', {}, { deadlineMs: 1500 }).catch(
        (e: grpc.ServiceError) => e,
      )) as grpc.ServiceError;
      expect([grpc.status.UNAVAILABLE, grpc.status.DEADLINE_EXCEEDED]).toContain(err.code);
      expect(Date.now() - started).toBeLessThan(3000);
    } finally {
      clients.close();
    }
  });
});
