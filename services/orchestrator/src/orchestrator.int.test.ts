import { status as GrpcStatus, type ServiceError } from '@grpc/grpc-js';
import { Redis } from 'ioredis';
import { createPrismaClient, newUuid } from '@conveyor/db';
import {
  createIdempotentProducer,
  createKafka,
  type DeliveryMessage,
  encodeDeliveryMessage,
} from '@conveyor/kafka';
import { createLogger } from '@conveyor/logger';
import {
  callRpc as rpc,
  createOrchestratorClients,
  mutualTlsCredentials,
  type OrchestratorClients,
} from '@conveyor/proto';
import { authEpochKeys } from '@conveyor/runtime';
import {
  createTestDatabase,
  KAFKA_BROKERS,
  REDIS_URL,
  uniqueName,
  createTestTrust,
  type TestTrust,
} from '@conveyor/testing';
import { createTeam, createUser, createUserApiKey } from './auth/team-admin';
import { loadOrchestratorConfig } from './config';
import { Orchestrator } from './orchestrator';

const logger = createLogger({ service: 'orchestrator-test', level: 'silent' });

describe('orchestrator over real PostgreSQL, Kafka and gRPC', () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let trust: TestTrust;
  let orchestrator: Orchestrator;
  let clients: OrchestratorClients;
  const received: DeliveryMessage[] = [];
  const topic = uniqueName('deliveries');
  const epochs = authEpochKeys(uniqueName('auth-epoch'));
  const redis = new Redis(REDIS_URL);
  const db = () => createPrismaClient(database.url);

  beforeAll(async () => {
    database = await createTestDatabase();
    trust = await createTestTrust();
    const config = loadOrchestratorConfig({
      ...trust.serviceEnv('orchestrator'),
      DATABASE_URL: database.url,
      REDIS_URL: REDIS_URL,
      KAFKA_BROKERS: KAFKA_BROKERS.join(','),
      DELIVERIES_TOPIC: topic,
      DELIVERIES_CONSUMER_GROUP: uniqueName('group'),
      GRPC_PORT: '0',
      WORKER_GRPC_PORT: '0',
      HTTP_PORT: '0',
      AUTH_EPOCH_REDIS_PREFIX: epochs.global,
    });
    orchestrator = new Orchestrator(config, logger, async (deliveries) => {
      received.push(...deliveries.map((d) => d.message));
    });
    await orchestrator.start();
    clients = createOrchestratorClients(
      `127.0.0.1:${orchestrator.grpcPort}`,
      mutualTlsCredentials(trust.serviceEnv('gateway')),
    );
  });

  afterAll(async () => {
    clients?.close();
    redis.disconnect();
    await orchestrator?.stop();
    await database?.drop();
    await trust?.remove();
  });

  it('keeps a global auth epoch, bumped when it started listening for authentication changes', async () => {
    expect(Number(await redis.get(epochs.global))).toBeGreaterThan(0);
  });

  it('authenticates API keys with their expiry, bumps the team auth epoch on revocation, and refuses revoked or unknown keys with the same error', async () => {
    const prisma = db();
    const team = await createTeam(prisma, 'Acme');
    const user = await createUser(prisma, {
      teamId: team.id,
      email: `${uniqueName('u')}@acme.dev`,
      role: 'ADMIN',
    });
    const key = await createUserApiKey(prisma, { userId: user.id, name: 'test' });
    const stored = await prisma.apiKey.findUniqueOrThrow({ where: { id: key.id } });
    expect(stored.secretHash).not.toContain(key.key);

    const ok = await rpc(clients, 'auth', 'Authenticate', { api_key: key.key });
    expect(ok.caller).toMatchObject({
      team_id: team.id,
      principal_id: user.id,
      role: 'ADMIN',
      principal_type: 'USER',
    });
    expect(ok.expires_at).toBe('');
    const expiresAt = new Date(Date.now() + 3_600_000);
    await prisma.apiKey.update({ where: { id: key.id }, data: { expiresAt } });
    expect((await rpc(clients, 'auth', 'Authenticate', { api_key: key.key })).expires_at).toBe(
      expiresAt.toISOString(),
    );

    // The gateways' key caches learn of the revocation through the team's auth epoch (docs/service-trust.md).
    const epochBefore = await redis.get(epochs.team(team.id));
    await prisma.apiKey.update({ where: { id: key.id }, data: { revokedAt: new Date() } });
    while ((await redis.get(epochs.team(team.id))) === epochBefore)
      await new Promise((r) => setTimeout(r, 10));
    for (const apiKey of [key.key, 'cvy_nope', '']) {
      const err = (await rpc(clients, 'auth', 'Authenticate', { api_key: apiKey }).catch(
        (e: ServiceError) => e,
      )) as ServiceError;
      expect(err.code).toBe(GrpcStatus.UNAUTHENTICATED);
      expect(err.metadata.get('x-error-code')).toEqual(['authentication_required']);
    }
    await prisma.$disconnect();
  });

  it('pages through runs with a stable keyset cursor scoped to the team', async () => {
    const prisma = db();
    const team = await createTeam(prisma, 'Pager');
    const other = await createTeam(prisma, 'Other');
    const base = Date.parse('2026-01-01T00:00:00Z');
    const mkRun = (teamId: string, i: number) =>
      prisma.run.create({
        data: {
          id: newUuid(),
          teamId,
          title: `run ${i}`,
          prompt: 'p',
          creatorId: 'u',
          executorId: 'u',
          conversationId: newUuid(),
          sessionId: newUuid(),
          createdAt: new Date(base + i * 1000),
          updatedAt: new Date(base + i * 1000),
        },
      });
    for (let i = 0; i < 5; i++) await mkRun(team.id, i);
    await mkRun(other.id, 99);
    const caller = { team_id: team.id, principal_type: 'USER', principal_id: 'u', role: 'MEMBER' };

    const first = await rpc(clients, 'runs', 'ListRuns', { caller, limit: 2 });
    expect(first.runs.map((r) => r.title)).toEqual(['run 4', 'run 3']);
    expect(first.has_next_page).toBe(true);
    // A run created between pages must not shift the next page.
    await mkRun(team.id, 10);
    const second = await rpc(clients, 'runs', 'ListRuns', { caller, limit: 2, cursor: first.next_cursor });
    expect(second.runs.map((r) => r.title)).toEqual(['run 2', 'run 1']);
    const third = await rpc(clients, 'runs', 'ListRuns', { caller, limit: 2, cursor: second.next_cursor });
    expect(third.runs.map((r) => r.title)).toEqual(['run 0']);
    expect(third.has_next_page).toBe(false);

    const asc = await rpc(clients, 'runs', 'ListRuns', {
      caller,
      limit: 10,
      sort_by: 'created_at',
      sort_order: 'asc',
    });
    expect(asc.runs.map((r) => r.title)).toEqual(['run 0', 'run 1', 'run 2', 'run 3', 'run 4', 'run 10']);

    const bad = (await rpc(clients, 'runs', 'ListRuns', { caller, cursor: 'garbage' }).catch(
      (e: ServiceError) => e,
    )) as ServiceError;
    expect(bad.code).toBe(GrpcStatus.INVALID_ARGUMENT);
    await prisma.$disconnect();
  });

  it('consumes deliveries published by an idempotent producer through the real broker', async () => {
    const kafka = createKafka({ clientId: 'test-producer', brokers: KAFKA_BROKERS });
    const producer = createIdempotentProducer(kafka);
    await producer.connect();
    const message: DeliveryMessage = {
      version: 1,
      webhookUid: 'wh_test',
      deliveryId: uniqueName('delivery'),
      label: 'Accepted',
      identitySource: 'body_hash',
      receivedAt: new Date().toISOString(),
      sizeBytes: 2,
      bodyBase64: Buffer.from('{}').toString('base64'),
    };
    await producer.send({
      topic,
      acks: -1,
      messages: [{ key: message.webhookUid, value: encodeDeliveryMessage(message) }],
    });
    await producer.disconnect();

    const deadline = Date.now() + 20_000;
    while (!received.some((m) => m.deliveryId === message.deliveryId) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(received.find((m) => m.deliveryId === message.deliveryId)).toEqual(message);
  });

  it('reports readiness of its real dependencies', async () => {
    const res = await fetch(`http://127.0.0.1:${orchestrator.httpPort}/readyz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      status: 'ready',
      checks: {
        postgres: { ok: true },
        redis: { ok: true },
        'auth change feed': { ok: true },
        'run event feed': { ok: true },
        kafka: { ok: true },
      },
      loops: {
        'outbox relay': { ok: true },
        'lost-runner sweep': { ok: true },
        'run queue reconciliation': { ok: true },
        'github app reports': { ok: true },
        'event dispatcher': { ok: true },
        'slack poster': { ok: true },
        'linear reporter': { ok: true },
      },
    });
  });
});
