import * as grpc from '@grpc/grpc-js';
import { createOrchestratorClients } from './orchestrator-client';
import { loadOrchestratorProto } from './load-protos';
import { callRpc } from './typed-call';

describe('orchestrator clients against an in-process gRPC server on a real socket', () => {
  let server: grpc.Server;
  let port: number;
  let calls = 0;

  beforeAll(async () => {
    const proto = loadOrchestratorProto();
    server = new grpc.Server();
    server.addService(proto.HealthService.service, {
      Check: (_call: unknown, callback: grpc.sendUnaryData<unknown>) => {
        calls++;
        callback(null, { ready: true, checks: { postgres: 'ok' } });
      },
    });
    port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
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

  it('makes typed unary calls with the shared channel', async () => {
    const clients = createOrchestratorClients(`127.0.0.1:${port}`);
    try {
      const res = await callRpc(clients, 'health', 'Check', {});
      expect(res).toEqual({ ready: true, checks: { postgres: 'ok' } });
      expect(calls).toBe(1);
    } finally {
      clients.close();
    }
  });

  it('fails with UNAVAILABLE within the deadline when nothing listens', async () => {
    const clients = createOrchestratorClients('127.0.0.1:1');
    const started = Date.now();
    try {
      const err = (await callRpc(clients, 'health', 'Check', {}, { deadlineMs: 1500 }).catch((e: grpc.ServiceError) => e)) as grpc.ServiceError;
      expect([grpc.status.UNAVAILABLE, grpc.status.DEADLINE_EXCEEDED]).toContain(err.code);
      expect(Date.now() - started).toBeLessThan(3000);
    } finally {
      clients.close();
    }
  });
});
