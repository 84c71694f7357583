import { Webhook } from 'standardwebhooks';
import { createPrismaClient, type PrismaClient } from '@conveyor/db';
import { createLogger } from '@conveyor/logger';
import type { Caller__Output } from '@conveyor/proto';
import {
  createTestDatabase,
  createTestTrust,
  startEventReceiver,
  type ReceivedEvent as Received,
  type TestDatabase,
  type TestTrust,
} from '@conveyor/testing';
import { createTeam, createUser } from '../auth/team-admin';
import { CatalogModule } from '../catalog/catalog-module';
import { loadOrchestratorConfig } from '../config';
import { EgressPolicy } from '../egress/egress-policy';
import { createRun } from '../runs/create-run';
import { PrismaRunReferences } from '../runs/prisma-run-references';
import { transitionRun } from '../runs/run-state-machine';
import { SecretCipher } from '../secrets/secret-cipher';
import { listEventAttempts, replayEvent } from './event-attempts';
import { EventDispatcher } from './event-dispatcher';
import { pruneOutboundEvents } from './event-retention';
import {
  createEventEndpoint,
  getEventEndpoint,
  rotateEventEndpointSecret,
  updateEventEndpoint,
  type EventEndpointDeps,
} from './manage-event-endpoints';

const logger = createLogger({ service: 'test', level: 'silent' });

const caller = (teamId: string, userId: string, role: string): Caller__Output => ({
  team_id: teamId,
  principal_type: 'USER',
  principal_id: userId,
  role,
  api_key_id: '',
  run_id: '',
  display_name: '',
  email: '',
});

describe('event endpoints and their delivery over real PostgreSQL', () => {
  let database: TestDatabase;
  let trust: TestTrust;
  let db: PrismaClient;
  let deps: EventEndpointDeps;
  let dispatcher: EventDispatcher;
  let dispatcherOptions: ConstructorParameters<typeof EventDispatcher>[0];
  let admin: Caller__Output;
  let member: Caller__Output;
  let stranger: Caller__Output;
  let runDeps: Parameters<typeof createRun>[0];

  let urls: { policy: EgressPolicy; httpHosts: string[] };
  /** A receiver on loopback, allowed on its one port as an operator would (EGRESS_ALLOWED_ADDRESSES). */
  const allowedReceivers: string[] = [];
  const receiver = async () => {
    const rx = await startEventReceiver();
    allowedReceivers.push(new URL(rx.url).host);
    urls.policy = new EgressPolicy(allowedReceivers);
    return rx;
  };

  beforeAll(async () => {
    database = await createTestDatabase();
    trust = await createTestTrust();
    db = createPrismaClient(database.url);
    const config = loadOrchestratorConfig(trust.serviceEnv('orchestrator'));
    const cipher = SecretCipher.fromConfig(config);
    urls = { policy: new EgressPolicy([]), httpHosts: ['127.0.0.1'] };
    deps = { db, cipher, urls, secretGraceMs: 60 * 60 * 1000 };
    dispatcherOptions = {
      db,
      cipher,
      urls,
      logger,
      publicApiBaseUrl: 'https://conveyor.example/v1',
      // Retries at once (after the first), so a test waits for no clock.
      schedule: [0, 0, 0],
      timeoutMs: 60_000,
      disableAfterMs: 24 * 60 * 60 * 1000,
      concurrency: 2,
      intervalMs: 20,
    };
    dispatcher = new EventDispatcher(dispatcherOptions);
    dispatcher.start();
    const team = await createTeam(db, 'Events');
    const other = await createTeam(db, 'Elsewhere');
    admin = caller(
      team.id,
      (await createUser(db, { teamId: team.id, email: 'a@x.dev', role: 'ADMIN' })).id,
      'ADMIN',
    );
    member = caller(team.id, (await createUser(db, { teamId: team.id, email: 'm@x.dev' })).id, 'MEMBER');
    stranger = caller(
      other.id,
      (await createUser(db, { teamId: other.id, email: 's@x.dev', role: 'ADMIN' })).id,
      'ADMIN',
    );
    runDeps = {
      db,
      kickOutbox: () => undefined,
      defaultHarness: 'demo',
      references: new PrismaRunReferences(db),
      catalog: new CatalogModule({ config, db, logger }),
    };
  });

  afterAll(async () => {
    await dispatcher.stop();
    await db.$disconnect();
    await database.drop();
    await trust.remove();
  });

  const succeed = async (runId: string) => {
    const run = { id: runId, execution: 1 };
    await db.$transaction(async (tx) => {
      await transitionRun(tx, run, 'QUEUED', 'CLAIMED');
      await transitionRun(tx, run, 'CLAIMED', 'INPROGRESS');
      await transitionRun(tx, run, 'INPROGRESS', 'SUCCEEDED', { message: 'done' });
    });
  };

  it('checks who may manage endpoints, hides them from other teams, and keeps the secret encrypted', async () => {
    const rx = await receiver();
    try {
      await expect(
        createEventEndpoint(deps, member, {
          url: rx.url,
          event_types: ['*'],
          description: '',
        }),
      ).rejects.toMatchObject({ code: 'not_authorized' });
      const { endpoint, secret } = await createEventEndpoint(deps, admin, {
        url: rx.url,
        event_types: ['run.succeeded'],
        description: 'ci',
      });
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(await getEventEndpoint(db, member, endpoint.id)).toMatchObject({ url: rx.url, enabled: true });
      await expect(getEventEndpoint(db, stranger, endpoint.id)).rejects.toMatchObject({
        code: 'resource_not_found',
      });
      await expect(
        updateEventEndpoint(deps, stranger, {
          endpoint_id: endpoint.id,
          enabled: false,
          event_types: [],
          has_event_types: false,
        }),
      ).rejects.toMatchObject({ code: 'resource_not_found' });
      const row = await db.eventEndpoint.findUniqueOrThrow({ where: { id: endpoint.id } });
      const stored = Buffer.from(row.secretCiphertext);
      expect(stored.includes(Buffer.from(secret))).toBe(false);
      expect(stored.includes(Buffer.from(secret.slice('whsec_'.length), 'base64'))).toBe(false);
      await db.eventEndpoint.delete({ where: { id: endpoint.id } });
    } finally {
      rx.close();
    }
  });

  it('refuses URLs outbound calls may not reach', async () => {
    const strict = { ...deps, urls: { policy: new EgressPolicy([]), httpHosts: [] } };
    const create = (url: string) =>
      createEventEndpoint(strict, admin, { url, event_types: ['*'], description: '' });
    await expect(create('http://127.0.0.1:1/hook')).rejects.toThrow(/must use https/);
    await expect(create('https://127.0.0.1/hook')).rejects.toThrow(/may not reach/);
    await expect(create('https://169.254.169.254/latest')).rejects.toThrow(/may not reach/);
    await expect(create('https://[::ffff:10.0.0.1]/')).rejects.toThrow(/may not reach/);
  });

  it("delivers a run's events in order, signed so standardwebhooks verifies them, and retries 503 with the same id", async () => {
    const rx = await receiver();
    try {
      const { endpoint, secret } = await createEventEndpoint(deps, admin, {
        url: rx.url,
        event_types: ['run.queued', 'run.inprogress', 'run.succeeded'],
        description: '',
      });
      const { runId } = await createRun(runDeps, admin, { prompt: 'tell me when done' });
      await succeed(runId);
      const verify = (r: Received) =>
        new Webhook(secret).verify(r.body, r.headers as Record<string, string>) as {
          type: string;
          data: Record<string, unknown>;
        };

      const queued = await rx.next();
      expect(verify(queued)).toMatchObject({ type: 'run.queued', data: { run_id: runId, state: 'QUEUED' } });
      // The run's next event waits for this one: order per endpoint and run.
      queued.respond(503, { 'retry-after': '0' });
      const again = await rx.next();
      expect(again.headers['webhook-id']).toBe(queued.headers['webhook-id']);
      expect(again.body).toBe(queued.body);
      again.respond(204);

      const started = await rx.next();
      expect(verify(started).type).toBe('run.inprogress');
      started.respond(200);
      const done = await rx.next();
      expect(verify(done)).toMatchObject({
        type: 'run.succeeded',
        data: {
          run_id: runId,
          state: 'SUCCEEDED',
          previous_state: 'INPROGRESS',
          title: expect.any(String),
          status_message: 'done',
          session_link: `https://conveyor.example/console/runs/${runId}`,
        },
      });
      done.respond(200);
      await dispatcher.settled();

      const attempts = await listEventAttempts(db, member, endpoint.id, 0);
      expect(attempts.map((a) => [a.eventType, a.statusCode, a.deliveryStatus])).toEqual([
        ['run.succeeded', 200, 'succeeded'],
        ['run.inprogress', 200, 'succeeded'],
        ['run.queued', 204, 'succeeded'],
        ['run.queued', 503, 'succeeded'],
      ]);
      expect(attempts[3]!.nextAttemptAt).not.toBeNull();

      // Replay: the same event, id and body again.
      await replayEvent(db, admin, endpoint.id, done.headers['webhook-id'] as string);
      await dispatcher.kick();
      const replayed = await rx.next();
      expect(replayed.headers['webhook-id']).toBe(done.headers['webhook-id']);
      expect(replayed.body).toBe(done.body);
      replayed.respond(200);
      await expect(replayEvent(db, stranger, endpoint.id, 'msg_x')).rejects.toMatchObject({
        code: 'resource_not_found',
      });
      await db.eventEndpoint.delete({ where: { id: endpoint.id } });
    } finally {
      rx.close();
    }
  });

  it('signs with the old and the new secret during a rotation, and 410 disables the endpoint', async () => {
    const rx = await receiver();
    try {
      const created = await createEventEndpoint(deps, admin, {
        url: rx.url,
        event_types: ['run.queued'],
        description: '',
      });
      const rotated = await rotateEventEndpointSecret(deps, admin, created.endpoint.id);
      expect(rotated.endpoint.previousSecretExpiresAt).not.toBeNull();
      await createRun(runDeps, admin, { prompt: 'rotate' });
      const r = await rx.next();
      expect((r.headers['webhook-signature'] as string).split(' ')).toHaveLength(2);
      for (const secret of [created.secret, rotated.secret])
        expect(() => new Webhook(secret).verify(r.body, r.headers as Record<string, string>)).not.toThrow();
      r.respond(410);
      await dispatcher.settled();
      expect(await getEventEndpoint(db, admin, created.endpoint.id)).toMatchObject({
        enabled: false,
        disabledReason: expect.stringMatching(/410 Gone/),
      });
      await db.eventEndpoint.delete({ where: { id: created.endpoint.id } });
    } finally {
      rx.close();
    }
  });

  it('disables an endpoint whose attempts have failed for longer than the limit, and says so', async () => {
    const rx = await receiver();
    try {
      const { endpoint } = await createEventEndpoint(deps, admin, {
        url: rx.url,
        event_types: ['run.queued'],
        description: '',
      });
      // It has been failing for two days (the limit here is one).
      const since = new Date(Date.now() - 2 * 24 * 60 * 60 * 1000);
      await db.eventEndpoint.update({ where: { id: endpoint.id }, data: { failingSince: since } });
      await createRun(runDeps, admin, { prompt: 'nobody listens' });
      (await rx.next()).respond(500);
      await dispatcher.settled();
      expect(await getEventEndpoint(db, member, endpoint.id)).toMatchObject({
        enabled: false,
        disabledReason: `Every attempt failed since ${since.toISOString()}`,
      });
      await db.eventEndpoint.delete({ where: { id: endpoint.id } });
    } finally {
      rx.close();
    }
  });

  it('lets a hanging endpoint hold only its own deliveries', async () => {
    const slow = await receiver();
    const fast = await receiver();
    try {
      for (const rx of [slow, fast])
        await createEventEndpoint(deps, admin, {
          url: rx.url,
          event_types: ['run.queued'],
          description: '',
        });
      for (let i = 0; i < 4; i++) await createRun(runDeps, admin, { prompt: `fan out ${i}` });
      // The slow endpoint holds its two slots and answers nothing; the fast one still gets all four events.
      const held = [await slow.next(), await slow.next()];
      for (let i = 0; i < 4; i++) (await fast.next()).respond(200);
      for (const r of held) r.respond(200);
    } finally {
      slow.close();
      fast.close();
    }
  });

  it('prunes old events once delivered or given up, never one still pending', async () => {
    // Discard port: allowed like a receiver, nothing answers there.
    urls.policy = new EgressPolicy([...allowedReceivers, '127.0.0.1:9']);
    const { endpoint } = await createEventEndpoint(deps, admin, {
      url: 'http://127.0.0.1:9/never',
      event_types: ['*'],
      description: '',
    });
    // Disabled: the dispatcher leaves its deliveries alone.
    await db.eventEndpoint.update({ where: { id: endpoint.id }, data: { enabled: false } });
    const { runId } = await createRun(runDeps, admin, { prompt: 'old news' });
    const old = new Date('2020-01-01T00:00:00Z');
    for (const [id, status] of [
      ['msg_old_done', 'succeeded'],
      ['msg_old_failed', 'failed'],
      ['msg_old_pending', 'pending'],
    ] as const) {
      await db.outboundEvent.create({
        data: { id, teamId: admin.team_id, runId, type: 'run.queued', occurredAt: old },
      });
      await db.eventDelivery.create({ data: { eventId: id, endpointId: endpoint.id, runId, status } });
    }
    await pruneOutboundEvents(db, new Date('2021-01-01T00:00:00Z'));
    const left = await db.outboundEvent.findMany({ where: { id: { startsWith: 'msg_old_' } } });
    expect(left.map((e) => e.id)).toEqual(['msg_old_pending']);
    await db.eventEndpoint.delete({ where: { id: endpoint.id } });
  });

  // Last: it stops the shared dispatcher so that only its own, with a long retry, attempts.
  it("holds a run's later events back until its retry, so they cannot crowd the claim meanwhile", async () => {
    await dispatcher.stop();
    const hourly = new EventDispatcher({ ...dispatcherOptions, schedule: [0, 3_600_000] });
    const rx = await receiver();
    try {
      const { endpoint } = await createEventEndpoint(deps, admin, {
        url: rx.url,
        event_types: ['run.queued', 'run.inprogress', 'run.succeeded'],
        description: '',
      });
      const { runId } = await createRun(runDeps, admin, { prompt: 'retry me later' });
      await succeed(runId);
      await hourly.dispatch();
      const queued = await rx.next();
      expect(queued.body).toContain('"run.queued"');
      queued.respond(503);
      await hourly.settled();

      const deliveries = await db.eventDelivery.findMany({
        where: { endpointId: endpoint.id },
        orderBy: { id: 'asc' },
      });
      expect(deliveries.map((d) => [d.status, d.attempts])).toEqual([
        ['pending', 1],
        ['pending', 0],
        ['pending', 0],
      ]);
      const retryAt = deliveries[0]!.nextAttemptAt.getTime();
      expect(retryAt).toBeGreaterThan(Date.now() + 30 * 60_000);
      for (const later of deliveries.slice(1)) expect(later.nextAttemptAt.getTime()).toBe(retryAt);
      await db.eventEndpoint.delete({ where: { id: endpoint.id } });
    } finally {
      // Closed first: an attempt still waiting for an answer ends at once instead of holding stop().
      rx.close();
      await hourly.stop();
    }
  });
});
