import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { initPki, serviceTlsEnv, type ServiceName } from '@conveyor/pki';
import {
  callRpc,
  createOrchestratorClients,
  mutualTlsCredentials,
  type OrchestratorClients,
} from '@conveyor/proto';
import { startPlatform, type RunningPlatform } from '@conveyor/testing';

/**
 * Finding 1: the orchestrator's gRPC port believed anyone. Now only certificates of this installation's CA get past
 * the TLS handshake, and each RPC answers only the identities that need it (docs/service-trust.md).
 */
describe('finding 1: authenticated gRPC between the services', () => {
  let platform: RunningPlatform;
  const open: OrchestratorClients[] = [];
  const caller = { team_id: 'team_dev', principal_type: 'USER', principal_id: 'user_dev', role: 'ADMIN' };

  const clientsWith = (credentials: grpc.ChannelCredentials): OrchestratorClients => {
    const clients = createOrchestratorClients(platform.orchestratorGrpcAddr, credentials);
    open.push(clients);
    return clients;
  };
  const as = (service: ServiceName) => clientsWith(mutualTlsCredentials(platform.trust.serviceEnv(service)));
  const failure = (p: Promise<unknown>) =>
    p.then(
      () => undefined,
      (err: grpc.ServiceError) => err,
    );
  /** The handshake fails, so the call never reaches a handler. */
  const refusedAtHandshake = (err: grpc.ServiceError | undefined) =>
    expect([grpc.status.UNAVAILABLE, grpc.status.DEADLINE_EXCEEDED]).toContain(err?.code);

  beforeAll(async () => {
    platform = await startPlatform({ withRunner: false });
  }, 120_000);

  afterAll(async () => {
    for (const c of open) c.close();
    await platform?.stop();
  });

  it('answers the gateway’s certificate (the control: the calls below fail for who calls, not how)', async () => {
    const gateway = as('gateway');
    expect((await callRpc(gateway, 'runs', 'ListRuns', { caller, limit: 5 } as never)).runs).toEqual(
      expect.any(Array),
    );
    expect((await callRpc(gateway, 'health', 'Check', {})).ready).toBe(true);
  });

  it('refuses a plain-text client', async () => {
    const err = await failure(
      callRpc(
        clientsWith(grpc.credentials.createInsecure()),
        'runs',
        'ListRuns',
        { caller, limit: 5 } as never,
        { deadlineMs: 3000 },
      ),
    );
    refusedAtHandshake(err);
  });

  it('refuses TLS without a client certificate, and a certificate from another CA', async () => {
    const noCert = grpc.credentials.createSsl(readFileSync(platform.trust.caFile));
    refusedAtHandshake(
      await failure(callRpc(clientsWith(noCert), 'health', 'Check', {}, { deadlineMs: 3000 })),
    );

    // A complete, valid PKI of another installation: its gateway certificate names the right service.
    const foreignDir = mkdtempSync(path.join(os.tmpdir(), 'conveyor-foreign-pki-'));
    await initPki(foreignDir, { services: ['gateway'] });
    const foreign = mutualTlsCredentials({
      ...serviceTlsEnv(foreignDir, 'gateway'),
      GRPC_TLS_CA_FILE: platform.trust.caFile,
    });
    const err = await failure(
      callRpc(clientsWith(foreign), 'runs', 'ListRuns', { caller, limit: 5 } as never, { deadlineMs: 3000 }),
    );
    refusedAtHandshake(err);
  });

  it('refuses the runner’s certificate ResolveWebhook and every call carrying a Caller', async () => {
    const runner = as('runner');
    expect(
      (await failure(callRpc(runner, 'webhookIngress', 'ResolveWebhook', { webhook_uid: 'wh_any' })))?.code,
    ).toBe(grpc.status.PERMISSION_DENIED);
    expect((await failure(callRpc(runner, 'runs', 'ListRuns', { caller, limit: 5 } as never)))?.code).toBe(
      grpc.status.PERMISSION_DENIED,
    );
    expect(
      (await failure(callRpc(runner, 'runs', 'CreateRun', { caller, prompt: 'x' } as never)))?.code,
    ).toBe(grpc.status.PERMISSION_DENIED);
    expect((await failure(callRpc(runner, 'factories', 'ListSecrets', { caller } as never)))?.code).toBe(
      grpc.status.PERMISSION_DENIED,
    );
    expect((await failure(callRpc(runner, 'auth', 'Authenticate', { api_key: platform.apiKey })))?.code).toBe(
      grpc.status.PERMISSION_DENIED,
    );
  });

  it('refuses the ingress’s certificate creating or reading runs; the gateway’s resolving webhooks or claiming runs', async () => {
    const ingress = as('ingress');
    expect(
      (await failure(callRpc(ingress, 'runs', 'CreateRun', { caller, prompt: 'x' } as never)))?.code,
    ).toBe(grpc.status.PERMISSION_DENIED);
    expect(
      (
        await failure(
          callRpc(ingress, 'runs', 'GetRun', {
            caller,
            run_id: '00000000-0000-4000-8000-000000000000',
          } as never),
        )
      )?.code,
    ).toBe(grpc.status.PERMISSION_DENIED);
    const gateway = as('gateway');
    expect(
      (await failure(callRpc(gateway, 'webhookIngress', 'ResolveWebhook', { webhook_uid: 'wh_any' })))?.code,
    ).toBe(grpc.status.PERMISSION_DENIED);
    expect(
      (
        await failure(
          callRpc(gateway, 'runner', 'ClaimRun', {
            run_id: '00000000-0000-4000-8000-000000000000',
            execution: 1,
            runner_id: 'x',
          }),
        )
      )?.code,
    ).toBe(grpc.status.PERMISSION_DENIED);
  });
});
