import { Redis } from 'ioredis';
import pg from 'pg';
import { createPrismaClient, Prisma, sqlPool, type PrismaClient } from '@conveyor/db';
import { outageOf } from '@conveyor/errors';
import { createLogger } from '@conveyor/logger';
import { createBlobStore } from '@conveyor/blob-store';
import type { Caller__Output, CompleteRunRequest__Output } from '@conveyor/proto';
import { runJobId } from '@conveyor/run-events';
import {
  createTestDatabase,
  REDIS_URL,
  uniqueName,
  type TestDatabase,
  createTestTrust,
  type TestTrust,
} from '@conveyor/testing';
import { createTeam, createUser } from '../auth/team-admin';
import { CatalogModule } from '../catalog/catalog-module';
import { loadOrchestratorConfig } from '../config';
import { CLAIM_SQL, claimRun } from '../runner/claim-run';
import { COMPLETE_SQL, completeRun } from '../runner/complete-run';
import { HarnessSessions } from '../runner/harness-sessions';
import { LostRunnerSweeper } from '../runner/lost-runner-sweeper';
import { heartbeat, reportEvents } from '../runner/report-events';
import { cancelRun } from './cancel-run';
import { createRun } from './create-run';
import { OutboxRelay, pendingEntries } from './outbox-relay';
import { PrismaRunReferences } from './prisma-run-references';
import { RunQueue } from './run-queue';
import { getTimeline } from './run-timeline';
import { submitFollowup } from './submit-followup';

const logger = createLogger({ service: 'test', level: 'silent' });

describe('run engine over real PostgreSQL and Redis', () => {
  let database: TestDatabase;
  let trust: TestTrust;
  let db: PrismaClient;
  let redis: Redis;
  let queue: RunQueue;
  let outbox: OutboxRelay;
  let caller: Caller__Output;
  const queueName = uniqueName('runs');
  const saved: string[] = [];
  const kick = () => void outbox.kick();
  const deps = () => ({
    db,
    queue,
    kickOutbox: kick,
    defaultHarness: 'demo',
    logger,
    references: new PrismaRunReferences(db),
    catalog: new CatalogModule({
      config: loadOrchestratorConfig(trust.serviceEnv('orchestrator')),
      db,
      logger,
    }),
  });
  let sessions: HarnessSessions;
  const complete = (
    req: Omit<CompleteRunRequest__Output, 'session' | 'events_json' | 'first_event' | 'followups'> &
      Partial<Pick<CompleteRunRequest__Output, 'session' | 'events_json' | 'first_event' | 'followups'>>,
  ) =>
    completeRun(
      { db, debugWindowMinutes: 10, saveTranscript: async (runId) => void saved.push(runId), sessions },
      { session: null, events_json: [], first_event: 0, ...req },
    );
  /** Runner `r` ends execution 1 of the run SUCCEEDED, unless told otherwise. */
  const endOf = (runId: string, outcome: Partial<Parameters<typeof complete>[0]> = {}) => ({
    run_id: runId,
    execution: 1,
    runner_id: 'r',
    state: 'SUCCEEDED',
    message: '',
    error_code: '',
    setup_failed: false,
    transcript: Buffer.alloc(0),
    ...outcome,
  });

  beforeAll(async () => {
    database = await createTestDatabase();
    trust = await createTestTrust();
    db = createPrismaClient(database.url);
    sessions = new HarnessSessions(createBlobStore(db));
    redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
    queue = new RunQueue(redis, queueName);
    outbox = new OutboxRelay(db, queue, logger);
    const team = await createTeam(db, 'Engine');
    const user = await createUser(db, { teamId: team.id, email: `${uniqueName('u')}@x.dev` });
    caller = {
      team_id: team.id,
      principal_type: 'USER',
      principal_id: user.id,
      role: 'MEMBER',
      api_key_id: '',
      run_id: '',
      display_name: '',
      email: '',
    };
  });

  afterAll(async () => {
    await queue.queue.obliterate({ force: true });
    await queue.close();
    await redis.quit();
    await db.$disconnect();
    await database.drop();
  });

  /**
   * A sweeper on a pool of its own, named so a test can find its connection in pg_stat_activity, and a run its
   * runner has taken to INPROGRESS.
   */
  const sweeperAndRunningRun = async (applicationName: string, prompt: string, runnerId: string) => {
    const url = new URL(database.url);
    url.searchParams.set('application_name', applicationName);
    const sweeperDb = createPrismaClient(url.toString());
    const sweeper = new LostRunnerSweeper({ db: sweeperDb, kickOutbox: kick, logger }, 30_000);
    const { runId } = await createRun(deps(), caller, { prompt });
    const target = { run_id: runId, execution: 1, runner_id: runnerId };
    await claimRun(db, target);
    await reportEvents(db, {
      ...target,
      events_json: [JSON.stringify({ kind: 'state_changed', from: 'PENDING', to: 'INPROGRESS' })],
    });
    return { sweeperDb, sweeper, runId, target };
  };
  const jobExists = async (runId: string, execution: number) =>
    Boolean(await queue.queue.getJob(runJobId({ runId, execution })));

  it('commits the run with its outbox entry and relays it to exactly one job', async () => {
    const { runId } = await createRun(deps(), caller, { prompt: 'hello' });
    await outbox.kick();
    expect(await jobExists(runId, 1)).toBe(true);
    // A relayed entry is deleted: the outbox holds only the backlog.
    expect(await db.outboxEntry.count({ where: { payload: { equals: { runId, execution: 1 } } } })).toBe(0);
    // Relaying again (a crash after enqueue but before marking) adds no second job.
    await queue.enqueue({ runId, execution: 1 });
    expect(await queue.queue.getJobCountByTypes('waiting')).toBeGreaterThanOrEqual(1);
    const jobs = await queue.queue.getJobs(['waiting']);
    expect(jobs.filter((j) => j.data.runId === runId)).toHaveLength(1);
  });

  it("finds each entry's run through the primary key, so a relay pass does not scan the runs", async () => {
    // With sequential scans priced out, a join the index cannot serve (e.g. on id::text) would still show one.
    const plan = await db.$transaction(async (tx) => {
      await tx.$executeRawUnsafe('SET LOCAL enable_seqscan = off');
      return tx.$queryRaw<Array<{ 'QUERY PLAN': string }>>(Prisma.sql`EXPLAIN ${pendingEntries(50)}`);
    });
    const text = plan.map((row) => row['QUERY PLAN']).join('\n');
    expect(text).toContain('Run_pkey');
    expect(text).not.toMatch(/Seq Scan on "Run"/);
  });

  it('recovers an outbox entry left behind when enqueueing failed', async () => {
    const broken = new RunQueue(
      new Redis('redis://127.0.0.1:1', {
        maxRetriesPerRequest: 0,
        lazyConnect: true,
        enableOfflineQueue: false,
        retryStrategy: () => null,
      }),
      queueName,
    );
    const brokenRelay = new OutboxRelay(db, broken, logger);
    const { runId } = await createRun({ ...deps(), kickOutbox: () => void brokenRelay.kick() }, caller, {
      prompt: 'survives',
    });
    await brokenRelay.kick();
    expect(await jobExists(runId, 1)).toBe(false);
    const row = await db.run.findUniqueOrThrow({ where: { id: runId } });
    expect(row.state).toBe('QUEUED');
    // The healthy relay's periodic sweep picks the entry up.
    await outbox.kick();
    expect(await jobExists(runId, 1)).toBe(true);
    await broken.queue.close().catch(() => undefined);
  });

  it('lets exactly one runner claim an execution and rejects stale runners', async () => {
    const { runId } = await createRun(deps(), caller, { prompt: 'claim me' });
    const results = await Promise.allSettled([
      claimRun(db, { run_id: runId, execution: 1, runner_id: 'a' }),
      claimRun(db, { run_id: runId, execution: 1, runner_id: 'b' }),
    ]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const winner = (await db.run.findUniqueOrThrow({ where: { id: runId } })).runnerId!;
    const loser = winner === 'a' ? 'b' : 'a';
    await expect(
      reportEvents(db, { run_id: runId, execution: 1, runner_id: loser, events_json: [] }),
    ).rejects.toMatchObject({ code: 'conflict' });
    await expect(heartbeat(db, { run_id: runId, execution: 1, runner_id: loser })).rejects.toMatchObject({
      code: 'conflict',
    });

    const control = await reportEvents(db, {
      run_id: runId,
      execution: 1,
      runner_id: winner,
      events_json: [
        JSON.stringify({ kind: 'state_changed', from: 'CLAIMED', to: 'PENDING' }),
        JSON.stringify({ kind: 'state_changed', from: 'PENDING', to: 'INPROGRESS' }),
        JSON.stringify({ kind: 'agent_message', text: 'hi' }),
        JSON.stringify({
          kind: 'artifact',
          artifact_type: 'EXTERNAL_REFERENCE',
          data: { reference_type: 'linear_issue', url: 'https://linear.app/x/issue/X-1' },
        }),
      ],
    });
    expect(control.cancel_requested).toBe(false);
    const run = await db.run.findUniqueOrThrow({ where: { id: runId }, include: { artifacts: true } });
    expect(run.state).toBe('INPROGRESS');
    expect(run.startedAt).toBeTruthy();
    expect(run.artifacts[0]).toMatchObject({
      type: 'EXTERNAL_REFERENCE',
      canonicalUrl: 'https://linear.app/x/issue/X-1',
    });
    await expect(
      reportEvents(db, { run_id: runId, execution: 1, runner_id: winner, events_json: ['{"kind":"bogus"}'] }),
    ).rejects.toMatchObject({ code: 'invalid_request' });

    await complete(
      endOf(runId, { runner_id: winner, transcript: Buffer.from('{"kind":"agent_message"}\n') }),
    );
    const done = await db.run.findUniqueOrThrow({ where: { id: runId } });
    expect(done).toMatchObject({ state: 'SUCCEEDED', runnerId: null, statusMessage: 'Run completed' });
    expect(done.endedAt).toBeTruthy();
    expect(saved).toContain(runId);
    const states = (
      await db.runEvent.findMany({ where: { runId, kind: 'state_changed' }, orderBy: { id: 'asc' } })
    ).map((e) => (e.data as { to: string }).to);
    expect(states).toEqual(['QUEUED', 'CLAIMED', 'PENDING', 'INPROGRESS', 'SUCCEEDED']);
  });

  it("mints no run key for an executor or creator outside the run's team: neither a user nor an agent of another team", async () => {
    const elsewhere = await createTeam(db, 'Elsewhere');
    const outsider = await createUser(db, { teamId: elsewhere.id, email: `${uniqueName('o')}@x.dev` });
    const { runId } = await createRun(deps(), caller, { prompt: 'whose key?' });
    await db.run.update({
      where: { id: runId },
      data: { executorType: 'USER', executorId: outsider.id, creatorType: 'USER', creatorId: outsider.id },
    });
    const assignment = await claimRun(db, { run_id: runId, execution: 1, runner_id: 'r' });
    expect(assignment.run_id).toBe(runId);
    expect(assignment.run_api_key).toBe('');
    expect(await db.apiKey.count({ where: { runId } })).toBe(0);

    const { runId: agentRun } = await createRun(deps(), caller, { prompt: 'an agent of another team' });
    await db.run.update({
      where: { id: agentRun },
      data: { executorType: 'AGENT', executorId: outsider.id },
    });
    expect((await claimRun(db, { run_id: agentRun, execution: 1, runner_id: 'r' })).run_api_key).toBe('');
    expect(await db.apiKey.count({ where: { runId: agentRun } })).toBe(0);
  });

  it('writes claim, batches, heartbeats and completion in one statement each as the state machine would', async () => {
    const { runId } = await createRun(deps(), caller, { prompt: 'one statement each' });
    const assignment = await claimRun(db, { run_id: runId, execution: 1, runner_id: 'r' });
    const key = await db.apiKey.findFirstOrThrow({ where: { runId } });
    expect(assignment.run_api_key.startsWith(key.prefix)).toBe(true);
    expect(assignment.completion_takes_events).toBe(true);
    expect(key).toMatchObject({
      userId: caller.principal_id,
      revokedAt: null,
      name: `run ${runId} execution 1`,
    });

    const batch = (...events: object[]) =>
      reportEvents(db, {
        run_id: runId,
        execution: 1,
        runner_id: 'r',
        events_json: events.map((e) => JSON.stringify(e)),
      });
    await batch(
      { kind: 'setup_step', step: 'harness_start', status: 'started' },
      { kind: 'state_changed', from: 'CLAIMED', to: 'PENDING' },
      { kind: 'agent_message', text: 'one' },
      { kind: 'state_changed', from: 'PENDING', to: 'PENDING' },
      { kind: 'state_changed', from: 'PENDING', to: 'INPROGRESS' },
      { kind: 'agent_message', text: 'two' },
    );
    const timeline = async () =>
      (await db.runEvent.findMany({ where: { runId }, orderBy: { id: 'asc' } })).map((e) => e.data);
    const written = await timeline();
    expect(written.slice(written.findIndex((e) => (e as { to?: string }).to === 'CLAIMED'))).toEqual([
      { kind: 'state_changed', from: 'QUEUED', to: 'CLAIMED' },
      { kind: 'setup_step', step: 'harness_start', status: 'started' },
      { kind: 'state_changed', from: 'CLAIMED', to: 'PENDING' },
      { kind: 'agent_message', text: 'one' },
      { kind: 'state_changed', from: 'PENDING', to: 'INPROGRESS' },
      { kind: 'agent_message', text: 'two' },
    ]);
    // A move back is refused whole: nothing of the batch is written.
    await expect(
      batch(
        { kind: 'agent_message', text: 'lost' },
        { kind: 'state_changed', from: 'INPROGRESS', to: 'PENDING' },
      ),
    ).rejects.toMatchObject({ code: 'conflict' });
    expect(await timeline()).toEqual(written);

    const before = await db.run.findUniqueOrThrow({ where: { id: runId } });
    await heartbeat(db, { run_id: runId, execution: 1, runner_id: 'r' }, new Date(Date.now() + 1000));
    const beaten = await db.run.findUniqueOrThrow({ where: { id: runId } });
    expect(beaten.updatedAt).toEqual(before.updatedAt);
    expect(beaten.lastHeartbeatAt!.getTime()).toBeGreaterThan(before.lastHeartbeatAt!.getTime());

    await complete(
      endOf(runId, {
        state: 'FAILED',
        message: 'tests failed',
        error_code: 'agent_failed',
        // The last batch rides on the completion (the assignment said the orchestrator takes it), before the outcome.
        events_json: [JSON.stringify({ kind: 'agent_message', text: 'last' })],
      }),
    );
    expect((await timeline()).at(-2)).toEqual({ kind: 'agent_message', text: 'last' });
    expect((await timeline()).at(-1)).toEqual({
      kind: 'state_changed',
      from: 'INPROGRESS',
      to: 'FAILED',
      message: 'tests failed',
      error_code: 'agent_failed',
    });
    expect(await db.run.findUniqueOrThrow({ where: { id: runId } })).toMatchObject({
      state: 'FAILED',
      errorCode: 'agent_failed',
      retryable: false,
      runnerId: null,
    });
    expect((await db.apiKey.findFirstOrThrow({ where: { runId } })).revokedAt).toBeTruthy();
  });

  it('cancels per state: queued at once (job removed), running via the next heartbeat, PENDING conflicts, ended rejected', async () => {
    const queued = await createRun(deps(), caller, { prompt: 'q' });
    await outbox.kick();
    await cancelRun(deps(), caller, queued.runId);
    expect(await jobExists(queued.runId, 1)).toBe(false);
    await expect(claimRun(db, { run_id: queued.runId, execution: 1, runner_id: 'r' })).rejects.toMatchObject({
      code: 'conflict',
    });

    const running = await createRun(deps(), caller, { prompt: 'r' });
    await claimRun(db, { run_id: running.runId, execution: 1, runner_id: 'r' });
    await reportEvents(db, {
      run_id: running.runId,
      execution: 1,
      runner_id: 'r',
      events_json: [JSON.stringify({ kind: 'state_changed', from: 'CLAIMED', to: 'PENDING' })],
    });
    await expect(cancelRun(deps(), caller, running.runId)).rejects.toMatchObject({
      code: 'conflict',
      httpStatus: 409,
    });
    await reportEvents(db, {
      run_id: running.runId,
      execution: 1,
      runner_id: 'r',
      events_json: [JSON.stringify({ kind: 'state_changed', from: 'PENDING', to: 'INPROGRESS' })],
    });
    await cancelRun(deps(), caller, running.runId);
    expect(
      (await heartbeat(db, { run_id: running.runId, execution: 1, runner_id: 'r' })).cancel_requested,
    ).toBe(true);
    // The runner's late completion does not overwrite CANCELLED, and lets go of the run: an ended run holds no runner.
    const late = endOf(running.runId, { state: 'ERROR', message: 'cancelled' });
    await complete(late);
    expect(await db.run.findUniqueOrThrow({ where: { id: running.runId } })).toMatchObject({
      state: 'CANCELLED',
      statusMessage: 'Cancelled by user',
      runnerId: null,
    });
    // Sent again after a lost answer, it is answered as the first time, and nothing moves.
    await expect(complete(late)).resolves.toMatchObject({ replayed: true });
    expect(await db.run.findUniqueOrThrow({ where: { id: running.runId } })).toMatchObject({
      state: 'CANCELLED',
      runnerId: null,
    });
    await expect(cancelRun(deps(), caller, running.runId)).rejects.toMatchObject({
      code: 'invalid_request',
      httpStatus: 400,
    });

    const selfHosted = await createRun(deps(), caller, { prompt: 's', config: { worker_host: 'my-box' } });
    await expect(cancelRun(deps(), caller, selfHosted.runId)).rejects.toMatchObject({
      code: 'operation_not_supported',
      httpStatus: 422,
    });
    const otherTeam = { ...caller, team_id: 'team_other' };
    await expect(cancelRun(deps(), otherTeam, selfHosted.runId)).rejects.toMatchObject({
      code: 'resource_not_found',
    });
  });

  /** The run's `followup_not_delivered` entries as the API's timeline shows them. */
  const notDelivered = async (runId: string) =>
    (await getTimeline(db, caller, runId)).events
      .filter((e) => e.kind === 'followup_not_delivered')
      .map((e) => JSON.parse(e.data_json) as unknown);

  it("records the follow-ups a cancelled run's harness never took as not delivered, and offers them no more", async () => {
    const queued = await createRun(deps(), caller, { prompt: 'q' });
    const input = await submitFollowup(deps(), caller, { runId: queued.runId, message: 'before the claim' });
    expect(input.routed_to).toBe('queued_input');
    await cancelRun(deps(), caller, queued.runId);
    expect(await notDelivered(queued.runId)).toEqual([
      { kind: 'followup_not_delivered', followup_id: input.followup_id, reason: 'run_cancelled' },
    ]);

    for (const acknowledges of [false, true]) {
      const { runId } = await createRun(deps(), caller, { prompt: 'c' });
      const target = { run_id: runId, execution: 1, runner_id: 'r' };
      await claimRun(db, target, { acknowledgesFollowups: acknowledges });
      await reportEvents(db, {
        ...target,
        events_json: [JSON.stringify({ kind: 'state_changed', from: 'PENDING', to: 'INPROGRESS' })],
        ...(acknowledges && { followups: { acknowledged_ids: [] } }),
      });
      const heard = await submitFollowup(deps(), caller, { runId, message: 'heard' });
      const taken = await heartbeat(db, {
        ...target,
        ...(acknowledges && { followups: { acknowledged_ids: [] } }),
      });
      expect(taken.followups.map((f) => f.followup_id)).toEqual([heard.followup_id]);
      if (acknowledges)
        await heartbeat(db, { ...target, followups: { acknowledged_ids: [heard.followup_id] } });
      const unheard = await submitFollowup(deps(), caller, { runId, message: 'too late' });
      expect(unheard.routed_to).toBe('live_harness');

      await cancelRun(deps(), caller, runId);
      expect(await notDelivered(runId)).toEqual([
        { kind: 'followup_not_delivered', followup_id: unheard.followup_id, reason: 'run_cancelled' },
      ]);
      // The runner learns of the cancel, not of a follow-up to a harness it is stopping.
      const control = await heartbeat(db, {
        ...target,
        ...(acknowledges && { followups: { acknowledged_ids: [] } }),
      });
      expect(control).toEqual({ cancel_requested: true, followups: [] });
      await complete(endOf(runId, { state: 'CANCELLED' }));
      expect(await db.run.findUniqueOrThrow({ where: { id: runId } })).toMatchObject({
        state: 'CANCELLED',
        execution: 1,
        runnerId: null,
      });
      expect(await db.runFollowup.findUniqueOrThrow({ where: { id: unheard.followup_id } })).toMatchObject({
        deliveredAt: null,
      });
      expect(await notDelivered(runId)).toHaveLength(1);
    }
  });

  it('offers a live follow-up to an acknowledging runner until it acknowledges it, across its processes', async () => {
    const { runId } = await createRun(deps(), caller, { prompt: 'f' });
    await claimRun(db, { run_id: runId, execution: 1, runner_id: 'r' });
    const first = await submitFollowup(deps(), caller, { runId, message: 'one' });
    const none = {
      run_id: runId,
      execution: 1,
      runner_id: 'r',
      followups: { acknowledged_ids: [] as string[] },
    };
    const offered = async (req: typeof none) =>
      (await heartbeat(db, req)).followups.map((f) => [f.followup_id, f.message]);
    // Handed to a process that died before taking it: the next heartbeat (of the next process) is offered it again.
    expect(await offered(none)).toEqual([[first.followup_id, 'one']]);
    expect(await offered(none)).toEqual([[first.followup_id, 'one']]);
    const second = await submitFollowup(deps(), caller, { runId, message: 'two' });
    const acked = { ...none, followups: { acknowledged_ids: [first.followup_id] } };
    // An event batch acknowledges as a heartbeat does; an acknowledgement sent again (its answer lost) is harmless.
    const batch = await reportEvents(db, { ...acked, events_json: [], first_event: 0 });
    expect(batch.followups.map((f) => f.message)).toEqual(['two']);
    expect(await offered(acked)).toEqual([[second.followup_id, 'two']]);
    const rows = await db.runFollowup.findMany({ where: { runId }, orderBy: { createdAt: 'asc' } });
    expect(rows.map((r) => r.deliveredAt !== null)).toEqual([true, false]);
    // An ID the run does not know is ignored, not an error.
    expect(
      await offered({ ...none, followups: { acknowledged_ids: [second.followup_id, 'not-a-uuid'] } }),
    ).toEqual([]);
    expect(await offered(none)).toEqual([]);
  });

  it('leaves the follow-ups a claim hands an acknowledging runner pending, and the next claim gets them when that runner is lost', async () => {
    const { runId } = await createRun(deps(), caller, { prompt: 'f' });
    const before = await submitFollowup(deps(), caller, { runId, message: 'before start' });
    expect(before.routed_to).toBe('queued_input');
    const claimed = await claimRun(
      db,
      { run_id: runId, execution: 1, runner_id: 'dies' },
      { acknowledgesFollowups: true },
    );
    expect(claimed.followups).toEqual(['before start']);
    expect(claimed.pending_followups).toEqual([{ followup_id: before.followup_id, message: 'before start' }]);
    const unacked = { run_id: runId, execution: 1, runner_id: 'dies', followups: { acknowledged_ids: [] } };
    // Not acknowledged yet: offered again (the runner drops it by ID).
    expect((await heartbeat(db, unacked)).followups.map((f) => f.followup_id)).toEqual([before.followup_id]);
    // The runner dies before its harness started: the sweep queues the run again, the follow-up with it.
    const sweeper = new LostRunnerSweeper({ db, kickOutbox: kick, logger }, 30_000);
    await sweeper.sweep(new Date(Date.now() + 10_000));
    await sweeper.sweep(new Date(Date.now() + 60_000));
    await sweeper.stop();
    expect(await db.run.findUniqueOrThrow({ where: { id: runId } })).toMatchObject({
      state: 'QUEUED',
      execution: 2,
    });
    const next = await claimRun(
      db,
      { run_id: runId, execution: 2, runner_id: 'next' },
      { acknowledgesFollowups: true },
    );
    expect(next.followups).toEqual(['before start']);
    const acked = { run_id: runId, execution: 2, runner_id: 'next' };
    expect(
      (await heartbeat(db, { ...acked, followups: { acknowledged_ids: [before.followup_id] } })).followups,
    ).toEqual([]);
    expect(await db.runFollowup.findUniqueOrThrow({ where: { id: before.followup_id } })).toMatchObject({
      execution: 2,
      deliveredAt: expect.any(Date),
    });
  });

  it('goes on as the next execution when an execution ends with follow-ups its harness never took', async () => {
    const ending = async (acknowledged: (id: string) => string[]) => {
      const { runId } = await createRun(deps(), caller, { prompt: 'f' });
      await claimRun(db, { run_id: runId, execution: 1, runner_id: 'r' }, { acknowledgesFollowups: true });
      const late = await submitFollowup(deps(), caller, { runId, message: 'after the last turn' });
      expect(late.routed_to).toBe('live_harness');
      const ack = { followups: { acknowledged_ids: acknowledged(late.followup_id) } };
      const end = endOf(runId, {
        // The completion's own batch does not mark it delivered: only what the runner acknowledges is.
        events_json: [JSON.stringify({ kind: 'agent_message', text: 'done' })],
        first_event: 1,
        ...ack,
      });
      await complete(end);
      return { runId, late, end };
    };
    const { runId, late, end } = await ending(() => []);
    const continued = { state: 'QUEUED', execution: 2, runnerId: null };
    expect(await db.run.findUniqueOrThrow({ where: { id: runId } })).toMatchObject(continued);
    // Sent again (its answer lost): the run went on meanwhile, so it is refused, and not continued twice.
    await expect(complete(end)).rejects.toMatchObject({ code: 'conflict' });
    expect(await db.run.findUniqueOrThrow({ where: { id: runId } })).toMatchObject(continued);
    await outbox.kick();
    expect(await jobExists(runId, 2)).toBe(true);
    const next = await claimRun(
      db,
      { run_id: runId, execution: 2, runner_id: 'r2' },
      { acknowledgesFollowups: true },
    );
    expect(next.pending_followups).toEqual([
      { followup_id: late.followup_id, message: 'after the last turn' },
    ]);
    // One the harness took and the runner acknowledged ends the run as the agent did.
    const taken = await ending((id) => [id]);
    expect(await db.run.findUniqueOrThrow({ where: { id: taken.runId } })).toMatchObject({
      state: 'SUCCEEDED',
      execution: 1,
    });
  });

  /** Until a statement starting with `sql` waits for a lock; asked outside any transaction (inside one,
   * pg_stat_activity stays as it was at its first read). */
  const waitingOnLock = async (sql: string) => {
    const waiting = `SELECT 1 FROM pg_stat_activity
                      WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE $1`;
    while ((await sqlPool(db).query(waiting, [`${sql.slice(0, 200)}%`])).rowCount === 0)
      await new Promise((resolve) => setImmediate(resolve));
  };

  /**
   * A follow-up sent through the real path, paused after it locked the run (its insert waits for a table lock held
   * here), while `racer` starts; it commits once `racer`'s statement (`sql`) waits for the run's row. The follow-up's
   * route and what `racer` answered.
   */
  const followupDuring = async <T>(runId: string, message: string, sql: string, racer: () => Promise<T>) => {
    const gate = new pg.Client({ connectionString: database.url });
    await gate.connect();
    try {
      await gate.query('BEGIN');
      await gate.query('LOCK TABLE "RunFollowup" IN SHARE MODE');
      const sent = submitFollowup(deps(), caller, { runId, message });
      await waitingOnLock('INSERT INTO "public"."RunFollowup"');
      const raced = racer();
      await waitingOnLock(sql);
      await gate.query('COMMIT');
      return { route: (await sent).routed_to, raced: await raced };
    } finally {
      await gate.end();
    }
  };

  it("continues the run with a follow-up committed while the completion waited for the run's row", async () => {
    const { runId } = await createRun(deps(), caller, { prompt: 'f' });
    await claimRun(db, { run_id: runId, execution: 1, runner_id: 'r' }, { acknowledgesFollowups: true });
    const { route } = await followupDuring(runId, 'as the agent ended', COMPLETE_SQL, () =>
      complete(endOf(runId, { followups: { acknowledged_ids: [] } })),
    );
    expect(route).toBe('live_harness');
    // Handed to the next execution rather than left pending on the ended one.
    expect(await db.run.findUniqueOrThrow({ where: { id: runId } })).toMatchObject({
      state: 'QUEUED',
      execution: 2,
    });
    const next = await claimRun(
      db,
      { run_id: runId, execution: 2, runner_id: 'r2' },
      { acknowledgesFollowups: true },
    );
    expect(next.followups).toEqual(['as the agent ended']);
  });

  it("hands a follow-up committed while the claim waited for the run's row to the runner's next heartbeat", async () => {
    const { runId } = await createRun(deps(), caller, { prompt: 'f' });
    const target = { run_id: runId, execution: 1, runner_id: 'r' };
    // The follow-up written as the API writes one to a queued run (submit-followup.ts), committed while the claim
    // waits for the run's row. The real path cannot be paused here: the claim's plan would wait for its table lock.
    const api = new pg.Client({ connectionString: database.url });
    await api.connect();
    let claimed;
    try {
      await api.query('BEGIN');
      await api.query('UPDATE "Run" SET "followupCount" = "followupCount" + 1 WHERE id = $1', [runId]);
      await api.query(
        `INSERT INTO "RunFollowup" (id, "runId", message, "routedTo", execution, "createdById")
         VALUES (gen_random_uuid(), $1, 'before start', 'queued_input', 1, $2)`,
        [runId, caller.principal_id],
      );
      const claiming = claimRun(db, target, { acknowledgesFollowups: true });
      await waitingOnLock(CLAIM_SQL);
      await api.query('COMMIT');
      claimed = await claiming;
    } finally {
      await api.end();
    }
    // Not in the claim's snapshot, so not in its assignment; still pending, so offered with the next answer.
    expect(claimed.pending_followups).toEqual([]);
    const offered = await heartbeat(db, { ...target, followups: { acknowledged_ids: [] } });
    expect(offered.followups.map((f) => f.message)).toEqual(['before start']);
  });

  it('routes follow-ups by state and hands live ones to the runner exactly once', async () => {
    const { runId } = await createRun(deps(), caller, { prompt: 'f' });
    expect((await submitFollowup(deps(), caller, { runId, message: 'before start' })).routed_to).toBe(
      'queued_input',
    );
    const assignment = await claimRun(db, { run_id: runId, execution: 1, runner_id: 'r' });
    expect(assignment.followups).toEqual(['before start']);
    expect((await submitFollowup(deps(), caller, { runId, message: 'while running' })).routed_to).toBe(
      'live_harness',
    );
    expect(
      (await heartbeat(db, { run_id: runId, execution: 1, runner_id: 'r' })).followups?.map((f) => f.message),
    ).toEqual(['while running']);
    expect((await heartbeat(db, { run_id: runId, execution: 1, runner_id: 'r' })).followups).toEqual([]);
    const cliSession = {
      path: '.claude/projects/-workspace/session.jsonl',
      content: Buffer.from('{"turn":1}\n'),
    };
    await complete(endOf(runId, { session: cliSession }));

    const next = await submitFollowup(deps(), caller, { runId, message: 'after the end' });
    expect(next).toMatchObject({ routed_to: 'new_execution', state: 'QUEUED' });
    await outbox.kick();
    expect(await jobExists(runId, 2)).toBe(true);
    // The continuation, on another runner, gets the CLI session the first execution handed back.
    const second = await sessions.attach(
      await claimRun(db, { run_id: runId, execution: 2, runner_id: 'r2' }),
    );
    expect(second).toMatchObject({
      execution: 2,
      followups: ['after the end'],
      debug_session: false,
      session: cliSession,
    });
    await expect(submitFollowup(deps(), caller, { runId, message: '  ' })).rejects.toMatchObject({
      code: 'invalid_request',
    });
  });

  it('gives a setup failure a debug session that never changes the run state', async () => {
    const { runId } = await createRun(deps(), caller, { prompt: 'd' });
    await claimRun(db, { run_id: runId, execution: 1, runner_id: 'r' });
    await complete(endOf(runId, { state: 'FAILED', message: 'npm install failed', setup_failed: true }));
    const failed = await db.run.findUniqueOrThrow({ where: { id: runId } });
    expect(failed).toMatchObject({
      state: 'FAILED',
      errorCode: 'environment_setup_failed',
      statusMessage: 'npm install failed',
    });
    expect(failed.sessionDebugUntil!.getTime()).toBeGreaterThan(Date.now());

    expect((await submitFollowup(deps(), caller, { runId, message: 'look at the log' })).routed_to).toBe(
      'debug_session',
    );
    const debug = await claimRun(db, { run_id: runId, execution: 2, runner_id: 'r' });
    expect(debug).toMatchObject({ debug_session: true, followups: ['look at the log'] });
    await reportEvents(db, {
      run_id: runId,
      execution: 2,
      runner_id: 'r',
      events_json: [JSON.stringify({ kind: 'state_changed', from: 'CLAIMED', to: 'INPROGRESS' })],
    });
    await complete(
      endOf(runId, {
        execution: 2,
        message: 'answered',
        session: { path: 'debug.jsonl', content: Buffer.from('{}') },
      }),
    );
    expect(await db.run.findUniqueOrThrow({ where: { id: runId } })).toMatchObject({
      state: 'FAILED',
      errorCode: 'environment_setup_failed',
      statusMessage: 'npm install failed',
      debugExecution: null,
    });

    // Outside the window a follow-up is an ordinary continuation.
    await db.run.update({ where: { id: runId }, data: { sessionDebugUntil: new Date(Date.now() - 1000) } });
    expect((await submitFollowup(deps(), caller, { runId, message: 'try again' })).routed_to).toBe(
      'new_execution',
    );
    // The debug agent's session is not the run's: the continuation starts without one.
    expect(
      (await sessions.attach(await claimRun(db, { run_id: runId, execution: 3, runner_id: 'r' }))).session,
    ).toBeUndefined();
  });

  it('records a batch and a completion sent again after a lost answer once, and answers the completion as the first time', async () => {
    const { runId } = await createRun(deps(), caller, { prompt: 'answers get lost' });
    await claimRun(db, { run_id: runId, execution: 1, runner_id: 'r' });
    const target = { run_id: runId, execution: 1, runner_id: 'r' };
    const json = (events: unknown[]) => events.map((e) => JSON.stringify(e));
    const first = json([
      { kind: 'state_changed', from: 'CLAIMED', to: 'PENDING' },
      { kind: 'state_changed', from: 'PENDING', to: 'INPROGRESS' },
      { kind: 'agent_message', text: 'one' },
      { kind: 'artifact', artifact_type: 'PLAN', data: { title: 'plan' } },
    ]);
    // The first answer was lost: the runner sends the same batch again, with what it had emitted since.
    await reportEvents(db, { ...target, events_json: first, first_event: 1 });
    await reportEvents(db, {
      ...target,
      events_json: [...first, ...json([{ kind: 'agent_message', text: 'two' }])],
      first_event: 1,
    });
    const outcome = endOf(runId, {
      message: 'done',
      transcript: Buffer.from('{}\n'),
      events_json: json([{ kind: 'agent_message', text: 'three' }]),
      first_event: 6,
    });
    const answered = await complete(outcome);
    // Sent again (the orchestrator restarted before answering, or the connection dropped after the commit).
    expect(await complete(outcome)).toEqual({ ...answered, replayed: true });
    expect(answered.replayed).toBe(false);

    const events = await db.runEvent.findMany({ where: { runId }, orderBy: { id: 'asc' } });
    const kinds = events.map((e) => {
      const data = e.data as { kind: string; to?: string; text?: string };
      return data.kind === 'state_changed' ? `→${data.to}` : (data.text ?? data.kind);
    });
    expect(kinds).toEqual([
      '→QUEUED',
      'answers get lost',
      '→CLAIMED',
      '→PENDING',
      '→INPROGRESS',
      'one',
      'artifact',
      'two',
      'three',
      '→SUCCEEDED',
    ]);
    expect(await db.artifact.count({ where: { runId } })).toBe(1);
    expect(await db.run.findUniqueOrThrow({ where: { id: runId } })).toMatchObject({
      state: 'SUCCEEDED',
      runnerId: null,
    });

    // A completion this runner did not make stays a conflict: the run it reports on ended otherwise.
    await expect(complete({ ...outcome, state: 'FAILED', events_json: [] })).rejects.toMatchObject({
      code: 'conflict',
    });
    // The next execution counts its events afresh.
    await submitFollowup(deps(), caller, { runId, message: 'again' });
    await claimRun(db, { run_id: runId, execution: 2, runner_id: 'r' });
    await reportEvents(db, {
      ...target,
      execution: 2,
      events_json: json([{ kind: 'agent_message', text: 'four' }]),
      first_event: 1,
    });
    expect(await db.runEvent.count({ where: { runId, execution: 2, kind: 'agent_message' } })).toBe(1);
  });

  it('takes no runner for lost across its own database outage: silence counts only while a heartbeat could land', async () => {
    // The sweeper's connection is ended the way a restarting server does.
    const { sweeperDb, sweeper, runId, target } = await sweeperAndRunningRun(
      'sweeper-under-test',
      'alive and retrying',
      'alive',
    );
    const state = async () => (await db.run.findUniqueOrThrow({ where: { id: runId } })).state;
    const at = (ms: number) => new Date(Date.now() + ms);

    await sweeper.sweep(at(0));
    // A pass fails on PostgreSQL's outage: its connection is terminated (57P01) while the statement waits.
    const locker = new pg.Client({ connectionString: database.url });
    await locker.connect();
    try {
      await locker.query('BEGIN; LOCK TABLE "Run" IN ACCESS EXCLUSIVE MODE');
      const failed = sweeper.sweep(at(40_000)).then(() => 'swept', outageOf);
      const waiting = async () =>
        (
          await locker.query(
            `SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity
              WHERE application_name = 'sweeper-under-test' AND wait_event_type = 'Lock'`,
          )
        ).rowCount;
      while ((await waiting()) === 0) await new Promise((resolve) => setImmediate(resolve));
      expect(await failed).toBe('postgres');
    } finally {
      await locker.query('ROLLBACK');
      await locker.end();
    }
    // Back: the run's last heartbeat is 45 s old, but no heartbeat could land while the database was away.
    await sweeper.sweep(at(45_000));
    expect(await state()).toBe('INPROGRESS');
    // The runner, retrying all along, gets through; 24 s later it is still not lost.
    await heartbeat(db, target, at(46_000));
    await sweeper.sweep(at(70_000));
    expect(await state()).toBe('INPROGRESS');
    // Silent for 34 s of a sweeper that could see its heartbeats: lost.
    await sweeper.sweep(at(80_000));
    expect(await state()).toBe('ERROR');
    await sweeper.stop();
    await sweeperDb.$disconnect();
  });

  it('leaves a run to its runner whose heartbeat lands while the sweep is moving it (a runner back just in time)', async () => {
    const { sweeperDb, sweeper, runId } = await sweeperAndRunningRun(
      'sweeper-raced',
      'back just in time',
      'restarted',
    );
    const at = (ms: number) => new Date(Date.now() + ms);
    await sweeper.sweep(at(0));
    // The runner's heartbeat holds the run's row as the sweep reads the run as silent for 40 s; the sweep's move
    // waits for it, then finds the heartbeat committed.
    const runner = new pg.Client({ connectionString: database.url });
    await runner.connect();
    try {
      await runner.query('BEGIN');
      await runner.query('SELECT 1 FROM "Run" WHERE id = $1 FOR UPDATE', [runId]);
      const swept = sweeper.sweep(at(40_000));
      const waiting = async () =>
        (
          await runner.query(
            `SELECT 1 FROM pg_stat_activity WHERE application_name = 'sweeper-raced' AND wait_event_type = 'Lock'`,
          )
        ).rowCount;
      while ((await waiting()) === 0) await new Promise((resolve) => setImmediate(resolve));
      await runner.query('UPDATE "Run" SET "lastHeartbeatAt" = $2 WHERE id = $1', [runId, at(40_000)]);
      await runner.query('COMMIT');
      await swept;
    } finally {
      await runner.end();
    }
    expect(await db.run.findUniqueOrThrow({ where: { id: runId } })).toMatchObject({
      state: 'INPROGRESS',
      runnerId: 'restarted',
    });
    await sweeper.stop();
    await sweeperDb.$disconnect();
  });

  it('records the follow-ups a lost runner never took as not delivered when the sweep ends the run ERROR', async () => {
    const { sweeperDb, sweeper, runId, target } = await sweeperAndRunningRun('followups-lost', 'l', 'lost');
    // Handed to the runner (an older one: delivered as sent), so not among those the run ended without.
    await submitFollowup(deps(), caller, { runId, message: 'heard' });
    await heartbeat(db, target);
    const unheard = await submitFollowup(deps(), caller, { runId, message: 'unheard' });

    await sweeper.sweep(new Date(Date.now() + 10_000));
    await sweeper.sweep(new Date(Date.now() + 60_000));
    expect(await db.run.findUniqueOrThrow({ where: { id: runId } })).toMatchObject({
      state: 'ERROR',
      runnerId: null,
    });
    expect(await notDelivered(runId)).toEqual([
      { kind: 'followup_not_delivered', followup_id: unheard.followup_id, reason: 'runner_lost' },
    ]);
    await sweeper.stop();
    await sweeperDb.$disconnect();
  });

  it('requeues a run whose runner vanished before starting, and errors one lost mid-run', async () => {
    const sweeper = new LostRunnerSweeper({ db, kickOutbox: kick, logger }, 30_000);
    const early = await createRun(deps(), caller, { prompt: 'early' });
    await claimRun(db, { run_id: early.runId, execution: 1, runner_id: 'gone' });
    const late = await createRun(deps(), caller, { prompt: 'late' });
    await claimRun(db, { run_id: late.runId, execution: 1, runner_id: 'gone' });
    await reportEvents(db, {
      run_id: late.runId,
      execution: 1,
      runner_id: 'gone',
      events_json: [JSON.stringify({ kind: 'state_changed', from: 'PENDING', to: 'INPROGRESS' })],
    });

    expect(await sweeper.sweep(new Date(Date.now() + 10_000))).toBe(0);
    // Other tests leave claimed runs behind too; these two are the ones checked below.
    expect(await sweeper.sweep(new Date(Date.now() + 60_000))).toBeGreaterThanOrEqual(2);
    const requeued = await db.run.findUniqueOrThrow({ where: { id: early.runId } });
    expect(requeued).toMatchObject({ state: 'QUEUED', execution: 2, runnerId: null });
    await outbox.kick();
    expect(await jobExists(early.runId, 2)).toBe(true);
    expect(await db.run.findUniqueOrThrow({ where: { id: late.runId } })).toMatchObject({
      state: 'ERROR',
      errorCode: 'resource_unavailable',
      retryable: true,
    });
    await sweeper.stop();
  });
});
