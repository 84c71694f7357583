import { status as GrpcStatus, type ServiceError } from '@grpc/grpc-js';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { createPrismaClient, type PrismaClient } from '@conveyor/db';
import { createLogger } from '@conveyor/logger';
import {
  callRpc,
  createOrchestratorClients,
  mutualTlsCredentials,
  type Caller,
  type OrchestratorClients,
} from '@conveyor/proto';
import {
  createTestDatabase,
  REDIS_URL,
  uniqueName,
  createTestTrust,
  type TestTrust,
} from '@conveyor/testing';
import { createTeam, createUser } from '../auth/team-admin';
import { loadOrchestratorConfig, type OrchestratorConfig } from '../config';
import { CatalogModule } from '../catalog/catalog-module';
import { PrismaRunReferences } from '../runs/prisma-run-references';
import { Orchestrator } from '../orchestrator';
import { fireScheduleTick } from './fire-schedule-tick';

const logger = createLogger({ service: 'schedules-test', level: 'silent' });
const EVERY_SECOND = '* * * * * *';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// Every-second schedules observed over several ticks, and replicas started and stopped.
jest.setTimeout(60_000);

async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined | false>,
  timeoutMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

/** Two orchestrator replicas in one process, on the same database, Redis and queues, as in a scaled deployment. */
describe('scheduled agents over real PostgreSQL, Redis (BullMQ job schedulers) and gRPC', () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let trust: TestTrust;
  let config: OrchestratorConfig;
  let replicas: Orchestrator[] = [];
  let clients: OrchestratorClients;
  let prisma: PrismaClient;
  let redis: Redis;
  let tickQueue: Queue;
  let caller: Caller;
  let otherTeam: Caller;

  const startReplica = async () => {
    const orchestrator = new Orchestrator(config, logger);
    await orchestrator.start();
    replicas.push(orchestrator);
    return orchestrator;
  };
  type Method =
    | 'CreateSchedule'
    | 'ListSchedules'
    | 'GetSchedule'
    | 'UpdateSchedule'
    | 'DeleteSchedule'
    | 'PauseSchedule'
    | 'ResumeSchedule';
  // Loosely typed on purpose: the tests also send what the typed client would refuse.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const rpc = (method: Method, request: object): Promise<any> =>
    callRpc(clients, 'schedules', method, request as never);
  const errorOf = (p: Promise<unknown>) =>
    p.then(
      () => undefined as unknown as ServiceError,
      (e: ServiceError) => e,
    );
  const firings = (scheduleId: string) =>
    prisma.scheduleFiring.findMany({ where: { scheduleId }, orderBy: { tickAt: 'asc' } });
  const runsOf = (scheduleId: string) =>
    prisma.run.findMany({ where: { scheduleId }, orderBy: { createdAt: 'asc' } });

  beforeAll(async () => {
    database = await createTestDatabase();
    trust = await createTestTrust();
    config = loadOrchestratorConfig({
      ...trust.serviceEnv('orchestrator'),
      DATABASE_URL: database.url,
      REDIS_URL,
      RUN_QUEUE: uniqueName('runs'),
      SCHEDULE_QUEUE: uniqueName('schedule-ticks'),
      CONSUME_DELIVERIES: 'false',
      GRPC_PORT: '0',
      WORKER_GRPC_PORT: '0',
      HTTP_PORT: '0',
    });
    prisma = createPrismaClient(database.url);
    redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
    tickQueue = new Queue(config.SCHEDULE_QUEUE, { connection: redis });
    const team = await createTeam(prisma, 'Schedules');
    const user = await createUser(prisma, {
      teamId: team.id,
      email: `${uniqueName('u')}@acme.dev`,
      role: 'MEMBER',
    });
    caller = { team_id: team.id, principal_type: 'USER', principal_id: user.id, role: 'MEMBER' };
    const other = await createTeam(prisma, 'Other');
    const otherUser = await createUser(prisma, {
      teamId: other.id,
      email: `${uniqueName('u')}@other.dev`,
      role: 'ADMIN',
    });
    otherTeam = { team_id: other.id, principal_type: 'USER', principal_id: otherUser.id, role: 'ADMIN' };
    await startReplica();
    await startReplica();
    clients = createOrchestratorClients(
      `127.0.0.1:${replicas[0]!.grpcPort}`,
      mutualTlsCredentials(trust.serviceEnv('gateway')),
    );
  });

  afterAll(async () => {
    clients?.close();
    await Promise.all(replicas.map((r) => r.stop()));
    await tickQueue?.obliterate({ force: true }).catch(() => undefined);
    await tickQueue?.close();
    await redis?.quit();
    await prisma?.$disconnect();
    await database?.drop();
    await trust?.remove();
  });

  it('starts exactly one run per tick with two replicas, stamped with the schedule and SCHEDULED_AGENT', async () => {
    const created = await rpc('CreateSchedule', {
      caller,
      name: 'every second',
      cron_schedule: EVERY_SECOND,
      prompt: 'tick',
      metadata: { team: 'infra' },
      config_json: JSON.stringify({ name: 'nightly' }),
    });
    expect(created).toMatchObject({
      name: 'every second',
      cron_schedule: EVERY_SECOND,
      timezone: 'UTC',
      enabled: true,
      prompt: 'tick',
    });
    expect(await tickQueue.getJobScheduler(created.id)).toMatchObject({
      key: created.id,
      pattern: EVERY_SECOND,
      tz: 'UTC',
    });

    await waitFor('five ticks', async () => (await firings(created.id)).length >= 5);
    await rpc('PauseSchedule', { caller, schedule_id: created.id });
    await sleep(300); // a tick taken just before the pause commits finishes

    const ticks = await firings(created.id);
    const runs = await runsOf(created.id);
    // One run per tick, each tick once, consecutive seconds: none doubled, none skipped.
    expect(runs).toHaveLength(ticks.length);
    expect(new Set(ticks.map((t) => t.runId))).toEqual(new Set(runs.map((r) => r.id)));
    for (let i = 1; i < ticks.length; i++)
      expect(ticks[i]!.tickAt.getTime() - ticks[i - 1]!.tickAt.getTime()).toBe(1000);
    for (const run of runs) {
      expect(run).toMatchObject({
        source: 'SCHEDULED_AGENT',
        scheduleId: created.id,
        scheduleName: 'every second',
        scheduleCron: EVERY_SECOND,
        prompt: 'tick',
        creatorId: caller.principal_id,
        teamId: caller.team_id,
        configName: 'nightly',
        metadata: { team: 'infra' },
      });
    }
  });

  it('makes a tick processed twice start one run (the firing row commits with the run)', async () => {
    const created = await rpc('CreateSchedule', {
      caller,
      name: 'idempotent',
      cron_schedule: '0 0 1 1 *',
      prompt: 'once',
    });
    const tickAt = new Date(Date.parse('2030-01-01T00:00:00Z'));
    const deps = {
      db: prisma,
      kickOutbox: () => undefined,
      defaultHarness: 'demo',
      references: new PrismaRunReferences(prisma),
      catalog: new CatalogModule({ config, db: prisma, logger }),
    };
    const job = { scheduleId: created.id, cron: '0 0 1 1 *', timezone: 'UTC' };
    const outcomes = await Promise.all([1, 2, 3].map(() => fireScheduleTick(deps, job, tickAt)));
    expect(outcomes.filter((o) => o.outcome === 'started')).toHaveLength(1);
    expect(outcomes.filter((o) => o.outcome === 'duplicate')).toHaveLength(2);
    expect(await runsOf(created.id)).toHaveLength(1);
    // A tick of an expression the schedule no longer has starts nothing.
    expect(await fireScheduleTick(deps, { ...job, cron: '* * * * *' }, new Date())).toEqual({
      outcome: 'stale',
    });
  });

  it('pauses (no scheduler, no runs, no next run) and resumes from the next tick without catching up', async () => {
    const created = await rpc('CreateSchedule', {
      caller,
      name: 'pausable',
      cron_schedule: EVERY_SECOND,
      prompt: 'p',
    });
    await waitFor('a first tick', async () => (await firings(created.id)).length >= 1);
    const paused = await rpc('PauseSchedule', { caller, schedule_id: created.id });
    expect(paused).toMatchObject({ enabled: false, next_run: '' });
    expect(await tickQueue.getJobScheduler(created.id)).toBeUndefined();
    await sleep(300);
    const before = (await firings(created.id)).length;
    await sleep(2500);
    expect(await firings(created.id)).toHaveLength(before);

    const resumedAt = Date.now();
    const resumed = await rpc('ResumeSchedule', { caller, schedule_id: created.id });
    expect(resumed.enabled).toBe(true);
    expect(Date.parse(resumed.next_run)).toBeGreaterThan(resumedAt);
    await waitFor('ticks after resume', async () => (await firings(created.id)).length >= before + 2);
    const after = (await firings(created.id)).slice(before);
    // Nothing of the paused seconds was backfilled.
    for (const f of after) expect(f.tickAt.getTime()).toBeGreaterThan(resumedAt - 1000);
    await rpc('PauseSchedule', { caller, schedule_id: created.id });
  });

  it('applies a new cron at once, shows history and next run, and deletes with all future runs', async () => {
    const created = await rpc('CreateSchedule', {
      caller,
      name: 'retimed',
      cron_schedule: EVERY_SECOND,
      prompt: 'r',
      timezone: 'Europe/Paris',
    });
    await waitFor('two ticks', async () => (await firings(created.id)).length >= 2);

    const details = await rpc('GetSchedule', { caller, schedule_id: created.id });
    expect(details.recent_runs.length).toBeGreaterThanOrEqual(2);
    expect(details.recent_runs[0]).toMatchObject({ state: 'QUEUED' });
    expect(details.recent_runs[0].created_at >= details.recent_runs[1].created_at).toBe(true);
    expect(details.last_ran).not.toBe('');
    const nextMs = Date.parse(details.next_run);
    expect(nextMs).toBeGreaterThan(Date.now() - 1000);
    expect(nextMs).toBeLessThanOrEqual(Date.now() + 1000);

    // Every year on Jan 1st 09:00 in Paris: nothing more fires during the test.
    const updated = await rpc('UpdateSchedule', {
      caller,
      schedule_id: created.id,
      name: 'retimed yearly',
      cron_schedule: '0 9 1 1 *',
      prompt: 'r2',
      enabled: true,
    });
    expect(updated).toMatchObject({
      name: 'retimed yearly',
      cron_schedule: '0 9 1 1 *',
      timezone: 'Europe/Paris',
      prompt: 'r2',
    });
    expect(updated.next_run).toMatch(/-01-01T08:00:00\.000Z$/);
    expect(await tickQueue.getJobScheduler(created.id)).toMatchObject({
      pattern: '0 9 1 1 *',
      tz: 'Europe/Paris',
    });
    await sleep(300);
    const count = (await firings(created.id)).length;
    await sleep(2000);
    expect(await firings(created.id)).toHaveLength(count);

    // Back to every second, paused through PUT: no scheduler at all.
    const pausedByPut = await rpc('UpdateSchedule', {
      caller,
      schedule_id: created.id,
      name: 'retimed',
      cron_schedule: EVERY_SECOND,
      prompt: 'r',
      enabled: false,
    });
    expect(pausedByPut.enabled).toBe(false);
    expect(await tickQueue.getJobScheduler(created.id)).toBeUndefined();
    await rpc('UpdateSchedule', {
      caller,
      schedule_id: created.id,
      name: 'retimed',
      cron_schedule: EVERY_SECOND,
      prompt: 'r',
      enabled: true,
    });
    await waitFor('a tick of the new expression', async () => (await firings(created.id)).length > count);

    await rpc('DeleteSchedule', { caller, schedule_id: created.id });
    expect(await tickQueue.getJobScheduler(created.id)).toBeUndefined();
    const runsAtDelete = (await runsOf(created.id)).length;
    await sleep(2000);
    expect(await runsOf(created.id)).toHaveLength(runsAtDelete);
    // The runs stay, still carrying the schedule they came from.
    expect(runsAtDelete).toBeGreaterThan(0);
    expect((await errorOf(rpc('GetSchedule', { caller, schedule_id: created.id }))).code).toBe(
      GrpcStatus.NOT_FOUND,
    );
  });

  it('lists the team schedules by name and hides other teams behind NOT_FOUND', async () => {
    const list = await rpc('ListSchedules', { caller });
    const names: string[] = list.schedules.map((s: { name: string }) => s.name);
    expect(names).toEqual([...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    expect(names).toEqual(expect.arrayContaining(['every second', 'idempotent', 'pausable']));
    const someone = list.schedules[0].id as string;

    expect((await rpc('ListSchedules', { caller: otherTeam })).schedules).toEqual([]);
    for (const method of ['GetSchedule', 'PauseSchedule', 'ResumeSchedule', 'DeleteSchedule']) {
      const err = await errorOf(rpc(method as Method, { caller: otherTeam, schedule_id: someone }));
      expect(err.code).toBe(GrpcStatus.NOT_FOUND);
      expect(err.metadata.get('x-error-code')).toEqual(['resource_not_found']);
    }
    const err = await errorOf(
      rpc('UpdateSchedule', {
        caller: otherTeam,
        schedule_id: someone,
        name: 'x',
        cron_schedule: '* * * * *',
        prompt: 'x',
        enabled: true,
      }),
    );
    expect(err.code).toBe(GrpcStatus.NOT_FOUND);
  });

  it('rejects invalid definitions with invalid_request naming the field', async () => {
    const cases: Array<[object, RegExp]> = [
      [
        { name: 'c', cron_schedule: '61 * * * *', prompt: 'p' },
        /^cron_schedule: "61 \* \* \* \*" is not a valid cron expression: Constraint error/,
      ],
      [{ name: 'c', cron_schedule: 'every day', prompt: 'p' }, /^cron_schedule: .*expected 5 fields/],
      [
        { name: 'c', cron_schedule: '0 9 * * *', timezone: 'Nowhere/City', prompt: 'p' },
        /^timezone: "Nowhere\/City" is not an IANA time zone/,
      ],
      [{ name: ' ', cron_schedule: '0 9 * * *', prompt: 'p' }, /^name: must not be empty/],
      [{ name: 'c', cron_schedule: '0 9 * * *', prompt: '' }, /^prompt: is required unless/],
      [{ name: 'c', cron_schedule: '0 9 * * *', prompt: 'p', mode: 'fast' }, /^mode: must be one of/],
      [
        { name: 'c', cron_schedule: '0 9 * * *', prompt: 'p', config_json: '[1]' },
        /^agent_config: must be a JSON object/,
      ],
    ];
    for (const [request, message] of cases) {
      const err = await errorOf(rpc('CreateSchedule', { caller, ...request }));
      expect(err.code).toBe(GrpcStatus.INVALID_ARGUMENT);
      expect(err.details).toMatch(message);
    }
    const missingAgent = await errorOf(
      rpc('CreateSchedule', {
        caller,
        name: 'c',
        cron_schedule: '0 9 * * *',
        prompt: 'p',
        agent_uid: 'agent_nope',
      }),
    );
    expect(missingAgent.code).toBe(GrpcStatus.NOT_FOUND);
    // A skill instead of a prompt is enough.
    const skillOnly = await rpc('CreateSchedule', {
      caller,
      name: 'skill only',
      cron_schedule: '0 9 * * *',
      prompt: '',
      config_json: JSON.stringify({ skill_spec: 'acme/api:deploy/SKILL.md' }),
      enabled: false,
    });
    expect(skillOnly).toMatchObject({ enabled: false, next_run: '' });
    expect(await prisma.schedule.count({ where: { teamId: caller.team_id, name: 'c' } })).toBe(0);
  });

  it('fires one catch-up run for the ticks missed while every replica was down, and reconciles schedulers at start', async () => {
    const created = await rpc('CreateSchedule', {
      caller,
      name: 'outage',
      cron_schedule: EVERY_SECOND,
      prompt: 'o',
    });
    await waitFor('two ticks', async () => (await firings(created.id)).length >= 2);
    clients.close();
    await Promise.all(replicas.map((r) => r.stop()));
    replicas = [];
    const downAt = Date.now();
    const lastBefore = (await firings(created.id)).at(-1)!.tickAt.getTime();

    // While everything is down: a scheduler lost (Redis flushed for it) and an orphan left by a crashed delete.
    const lost = await prisma.schedule.create({
      data: {
        id: `sched_${uniqueName('lost')}`,
        teamId: caller.team_id!,
        name: 'lost scheduler',
        cron: '0 9 * * *',
        prompt: 'l',
        createdById: caller.principal_id!,
        updatedById: caller.principal_id!,
      },
    });
    await tickQueue.upsertJobScheduler(
      'sched_orphan',
      { pattern: '0 9 * * *', tz: 'UTC' },
      { name: 'tick', data: {} },
    );
    await sleep(4000);

    const restartAt = Date.now();
    await startReplica();
    clients = createOrchestratorClients(
      `127.0.0.1:${replicas[0]!.grpcPort}`,
      mutualTlsCredentials(trust.serviceEnv('gateway')),
    );
    expect(await tickQueue.getJobScheduler(lost.id)).toMatchObject({ pattern: '0 9 * * *', tz: 'UTC' });
    expect(await tickQueue.getJobScheduler('sched_orphan')).toBeUndefined();

    await waitFor('ticks after the restart', async () =>
      (await firings(created.id)).some((f) => f.tickAt.getTime() > restartAt + 1000),
    );
    const missed = (await firings(created.id)).filter(
      (f) => f.tickAt.getTime() > lastBefore && f.tickAt.getTime() < restartAt,
    );
    // About four ticks fell in the outage: exactly one of them (the one pending when it began) ran, late.
    expect(restartAt - downAt).toBeGreaterThanOrEqual(4000);
    expect(missed).toHaveLength(1);
    expect(missed[0]!.createdAt.getTime()).toBeGreaterThanOrEqual(restartAt);
    await rpc('DeleteSchedule', { caller, schedule_id: created.id });
  });
});
