import { createBlobStore } from '@conveyor/blob-store';
import { createPrismaClient, type PrismaClient } from '@conveyor/db';
import { createLogger } from '@conveyor/logger';
import { createTestDatabase, uniqueName, type TestDatabase } from '@conveyor/testing';
import type { Caller } from '../auth/caller';
import { HarnessSessions } from '../runner/harness-sessions';
import type { RunAssignment } from '../runner/runner-messages';
import { createRun } from '../runs/create-run';
import { submitFollowup } from '../runs/submit-followup';
import { runDeps, teamAdmin } from '../test-support/run-scene';
import { checkWorkerId, WorkerDispatch, type WorkerLink } from './worker-dispatch';
import { createWorkerToken } from './worker-token';

const logger = createLogger({ service: 'test', level: 'silent' });

/** A worker's link that keeps what it was sent. */
class RecordingLink implements WorkerLink {
  readonly sent: RunAssignment[] = [];
  closed = false;
  send(assignment: RunAssignment): void {
    this.sent.push(assignment);
  }
  close(): void {
    this.closed = true;
  }
}

describe('WorkerDispatch over real PostgreSQL', () => {
  let database: TestDatabase;
  let db: PrismaClient;
  let caller: Caller;
  let tokenId: string;
  let dispatch: WorkerDispatch;
  const queueFor = async (workerHost: string) =>
    (await createRun(runDeps(db), caller, { prompt: 'go', config: { worker_host: workerHost } })).runId;
  const hello = (workerId: string, capacity: number) => ({
    teamId: caller.team_id,
    tokenId,
    workerId,
    hostname: 'host',
    version: '1',
    capacity,
  });

  beforeAll(async () => {
    database = await createTestDatabase();
    db = createPrismaClient(database.url);
    caller = await teamAdmin(db, 'Workers');
    tokenId = (await createWorkerToken(db, { teamId: caller.team_id, name: 'w' })).id;
  });

  beforeEach(() => {
    const sessions = new HarnessSessions(createBlobStore(db));
    dispatch = new WorkerDispatch(db, logger, {
      staleAfterMs: 60_000,
      dispatchIntervalMs: 60_000,
      apiBaseUrl: 'https://api.example.test',
      sessions,
    });
  });

  afterEach(() => dispatch.stop());

  afterAll(async () => {
    await db.$disconnect();
    await database.drop();
  });

  it("claims the queued runs routed to a worker's ID for its connection, oldest first, within its capacity", async () => {
    const workerId = uniqueName('w');
    const first = await queueFor(workerId);
    const second = await queueFor(workerId);
    const third = await queueFor(workerId);
    const elsewhere = await queueFor(uniqueName('other'));
    const link = new RecordingLink();
    const { runnerId } = await dispatch.connect(hello(workerId, 2), link);
    await dispatch.dispatch();

    expect(link.sent.map((a) => a.run_id)).toEqual([first, second]);
    expect(link.sent[0]).toMatchObject({ execution: 1, api_base_url: 'https://api.example.test' });
    const runs = await db.run.findMany({ where: { id: { in: [first, second, third, elsewhere] } } });
    const byId = new Map(runs.map((r) => [r.id, r]));
    expect(byId.get(first)).toMatchObject({ state: 'CLAIMED', runnerId });
    expect(byId.get(third)).toMatchObject({ state: 'QUEUED', runnerId: null });
    expect(byId.get(elsewhere)).toMatchObject({ state: 'QUEUED', runnerId: null });

    // Full until the worker's heartbeat counts what it runs; then the free slot takes the third.
    await dispatch.dispatch();
    expect(link.sent).toHaveLength(2);
    const [connection] = await db.workerConnection.findMany({ where: { workerId } });
    dispatch.heartbeat(connection!.id, 1);
    await dispatch.dispatch();
    expect(link.sent.map((a) => a.run_id)).toEqual([first, second, third]);
  });

  it("leaves a claimed run's follow-ups pending for a worker that acknowledges them, and delivers them to one that does not", async () => {
    const sentTo = async (acknowledgesFollowups: boolean) => {
      const workerId = uniqueName('w');
      const runId = await queueFor(workerId);
      const sent = await submitFollowup(runDeps(db), caller, { runId, message: 'before start' });
      const link = new RecordingLink();
      await dispatch.connect({ ...hello(workerId, 1), acknowledgesFollowups }, link);
      await dispatch.dispatch();
      const row = await db.runFollowup.findUniqueOrThrow({ where: { id: sent.followup_id } });
      return { assignment: link.sent[0], delivered: row.deliveredAt !== null, id: sent.followup_id };
    };
    const acknowledging = await sentTo(true);
    expect(acknowledging.assignment).toMatchObject({
      followups: ['before start'],
      pending_followups: [{ followup_id: acknowledging.id, message: 'before start' }],
    });
    expect(acknowledging.delivered).toBe(false);
    const older = await sentTo(false);
    expect(older.assignment).toMatchObject({ followups: ['before start'], pending_followups: [] });
    expect(older.delivered).toBe(true);
  });

  it('sends nothing to a worker that disconnected', async () => {
    const workerId = uniqueName('w');
    const link = new RecordingLink();
    const { connectionId } = await dispatch.connect(hello(workerId, 1), link);
    dispatch.disconnect(connectionId);
    const queued = await queueFor(workerId);
    await dispatch.dispatch();

    expect(link.sent).toEqual([]);
    expect((await db.run.findUniqueOrThrow({ where: { id: queued } })).state).toBe('QUEUED');
  });

  it('refuses worker IDs outside the pattern and the name of Warp-hosted runs', () => {
    expect(() => checkWorkerId('warp')).toThrow(/not "warp"/);
    expect(() => checkWorkerId('-leading-dash')).toThrow(/worker_id/);
    expect(() => checkWorkerId('build-box.1')).not.toThrow();
  });

  it("closes every worker's link when it stops", async () => {
    const link = new RecordingLink();
    await dispatch.connect(hello(uniqueName('w'), 1), link);
    await dispatch.stop();
    expect(link.closed).toBe(true);
  });
});
