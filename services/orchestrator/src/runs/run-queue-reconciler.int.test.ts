import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { createPrismaClient, type PrismaClient } from '@conveyor/db';
import { createLogger } from '@conveyor/logger';
import type { Caller__Output } from '@conveyor/proto';
import { runJobId, type RunJob } from '@conveyor/run-events';
import {
  createTestDatabase,
  createTestTrust,
  REDIS_URL,
  uniqueName,
  type TestDatabase,
  type TestTrust,
} from '@conveyor/testing';
import { createTeam, createUser } from '../auth/team-admin';
import { CatalogModule } from '../catalog/catalog-module';
import { loadOrchestratorConfig } from '../config';
import { createRun } from './create-run';
import { OutboxRelay } from './outbox-relay';
import { PrismaRunReferences } from './prisma-run-references';
import { RunQueue } from './run-queue';
import { RunQueueReconciler } from './run-queue-reconciler';

const logger = createLogger({ service: 'test', level: 'silent' });

// Redis loses its data (a restart without persistence, a failover, FLUSHALL) while runs wait: PostgreSQL still says
// QUEUED, BullMQ has nothing. Here the queue's keys are deleted (obliterate), which is FLUSHALL for this queue alone:
// the Redis server is shared with the other tests.
describe('run queue reconciler over real PostgreSQL and Redis', () => {
  let database: TestDatabase;
  let trust: TestTrust;
  let db: PrismaClient;
  let redis: Redis;
  let queue: RunQueue;
  let relay: OutboxRelay;
  let reconciler: RunQueueReconciler;
  let caller: Caller__Output;

  beforeAll(async () => {
    database = await createTestDatabase();
    trust = await createTestTrust();
    db = createPrismaClient(database.url);
    redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
    queue = new RunQueue(redis, uniqueName('runs'));
    relay = new OutboxRelay(db, queue, logger);
    reconciler = new RunQueueReconciler({ db, queue, logger }, 60_000);
    const team = await createTeam(db, 'Reconciled');
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
    await trust.remove();
  });

  const createQueuedRuns = async (count: number): Promise<RunJob[]> => {
    const deps = {
      db,
      kickOutbox: () => undefined,
      defaultHarness: 'demo',
      references: new PrismaRunReferences(db),
      catalog: new CatalogModule({
        config: loadOrchestratorConfig(trust.serviceEnv('orchestrator')),
        db,
        logger,
      }),
    };
    const jobs: RunJob[] = [];
    for (let i = 0; i < count; i++) {
      const { runId } = await createRun(deps, caller, { prompt: `waiting ${i}` });
      jobs.push({ runId, execution: 1 });
    }
    await relay.kick();
    return jobs;
  };

  /** The jobs of these runs in Redis, whatever their state. */
  const jobsOf = async (jobs: RunJob[]) =>
    (await queue.queue.getJobs(['waiting', 'active', 'delayed', 'failed', 'completed'])).filter((j) =>
      jobs.some((r) => j.id === runJobId(r)),
    );

  it('gives every QUEUED run a job again, exactly once, after Redis lost them', async () => {
    const runs = await createQueuedRuns(12);
    expect(await jobsOf(runs)).toHaveLength(12);

    await queue.queue.obliterate({ force: true });
    expect(await jobsOf(runs)).toHaveLength(0);

    expect(await reconciler.reconcile()).toEqual({ enqueued: 12, retried: 0 });
    const jobs = await jobsOf(runs);
    expect(jobs.map((j) => j.id).sort()).toEqual(runs.map(runJobId).sort());
    // A second pass (or another replica's, or the outbox relay's) finds every job in place and adds none.
    expect(await reconciler.reconcile()).toEqual({ enqueued: 0, retried: 0 });
    await queue.enqueueMany(runs);
    expect(await jobsOf(runs)).toHaveLength(12);
    const ids = runs.map((r) => r.runId);
    expect(await db.run.count({ where: { id: { in: ids }, state: 'QUEUED' } })).toBe(12);
    // Out of the next test's way: these runs wait no more, and their jobs go.
    await db.run.updateMany({ where: { id: { in: ids } }, data: { state: 'CANCELLED' } });
    await queue.queue.obliterate({ force: true });
  });

  it('retries a job a runner gave up before claiming its run (the orchestrator was unreachable)', async () => {
    const [run] = await createQueuedRuns(1);
    const connection = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
    const worker = new Worker(
      queue.queue.name,
      async () => {
        throw new Error('14 UNAVAILABLE: No connection established');
      },
      { connection, autorun: false },
    );
    const failed = new Promise<void>((resolve) => worker.once('failed', () => resolve()));
    void worker.run();
    await failed;
    await worker.close();
    await connection.quit();
    expect(await queue.queue.getJobState(runJobId(run!))).toBe('failed');

    expect(await reconciler.reconcile()).toEqual({ enqueued: 0, retried: 1 });
    expect(await queue.queue.getJobState(runJobId(run!))).toBe('waiting');
    expect(await reconciler.reconcile()).toEqual({ enqueued: 0, retried: 0 });
  });
});
