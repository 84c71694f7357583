import pg from 'pg';
import { createPrismaClient, sqlPool, type PrismaClient } from '@conveyor/db';
import { createLogger } from '@conveyor/logger';
import { AppError } from '@conveyor/errors';
import { createTestDatabase, type TestDatabase } from '@conveyor/testing';
import type { Caller } from '../auth/caller';
import { cancelRun } from '../runs/cancel-run';
import { createRun } from '../runs/create-run';
import type { RunQueue } from '../runs/run-queue';
import { SecretCipher } from '../secrets/secret-cipher';
import { runDeps, succeeded, teamAdmin } from '../test-support/run-scene';
import { claimRun } from './claim-run';
import { completeRun } from './complete-run';
import { LostRunnerSweeper } from './lost-runner-sweeper';
import { heartbeat, reportEvents } from './report-events';
import {
  ADOPT_SQL,
  adoptRuns,
  RELEASE_SQL,
  releaseRunLease,
  SAVE_SQL,
  saveRunLease,
  type RunLeaseDeps,
} from './run-leases';

const EXPIRY_MS = 15_000;
const RECORD = JSON.stringify({ version: 1, modelToken: 'mt-secret-token', runApiKey: 'ck-run-key' });

describe('run leases over real PostgreSQL', () => {
  let database: TestDatabase;
  let db: PrismaClient;
  let caller: Caller;
  let deps: RunLeaseDeps;

  beforeAll(async () => {
    database = await createTestDatabase();
    db = createPrismaClient(database.url);
    caller = await teamAdmin(db, 'Leases');
    deps = { db, cipher: new SecretCipher(Buffer.alloc(32, 3)), expiryMs: EXPIRY_MS };
  });

  afterAll(async () => {
    await db.$disconnect();
    await database.drop();
  });

  /** A run whose agent started on runner `r1` (INPROGRESS, execution 1). */
  const started = async () => {
    const { runId } = await createRun(runDeps(db), caller, { prompt: 'long step' });
    const execution = { run_id: runId, execution: 1, runner_id: 'r1' };
    await claimRun(db, execution);
    await reportEvents(db, {
      ...execution,
      events_json: [JSON.stringify({ kind: 'state_changed', from: 'PENDING', to: 'INPROGRESS' })],
    });
    return execution;
  };
  const later = (ms: number) => new Date(Date.now() + ms);
  const refusal = (promise: Promise<unknown>) =>
    promise.then(
      () => undefined,
      (err: unknown) => (err instanceof AppError ? err.code : err),
    );
  const mine = async (runnerId: string, runId: string, now: Date) =>
    (await adoptRuns(deps, { runner_id: runnerId, limit: 20 }, now)).filter((r) => r.run_id === runId);

  it('keeps the record sealed, refuses a live lease and hands an expired one over with its record', async () => {
    const run = await started();
    await saveRunLease(deps, { ...run, record_json: RECORD });
    const row = await db.runLease.findUniqueOrThrow({ where: { runId: run.run_id } });
    expect(Buffer.from(row.recordCiphertext).toString('latin1')).not.toContain('mt-secret-token');

    // Alive (its heartbeat is fresh): nobody takes it.
    expect(await mine('r2', run.run_id, later(EXPIRY_MS - 1_000))).toEqual([]);
    const adopted = await mine('r2', run.run_id, later(EXPIRY_MS + 1_000));
    expect(adopted).toEqual([
      { run_id: run.run_id, execution: 1, previous_runner_id: 'r1', record_json: RECORD },
    ]);
    expect(await db.run.findUniqueOrThrow({ where: { id: run.run_id } })).toMatchObject({
      runnerId: 'r2',
      state: 'INPROGRESS',
    });
    // The adopter's lease is fresh: a third replica cannot take it from under it.
    expect(await mine('r3', run.run_id, later(EXPIRY_MS + 2_000))).toEqual([]);
    // The previous holder, should it come back, holds nothing: told so (not told to cancel), its writes refused.
    expect(await refusal(heartbeat(db, run))).toBe('conflict');
    expect(await refusal(saveRunLease(deps, { ...run, record_json: RECORD }))).toBe('conflict');
    expect(await refusal(releaseRunLease(deps, run))).toBe('conflict');
  });

  it('ends a run whose record was sealed with a key the deployment no longer has, and still hands the others over', async () => {
    // Sealed by a deployment whose secrets key has since been removed (not kept as a previous key).
    const retired = { ...deps, cipher: new SecretCipher(Buffer.alloc(32, 9)) };
    const orphaned = await started();
    await saveRunLease(retired, { ...orphaned, record_json: RECORD });
    const run = await started();
    await saveRunLease(deps, { ...run, record_json: RECORD });

    const adopted = await adoptRuns(deps, { runner_id: 'r2', limit: 20 }, later(EXPIRY_MS + 1_000));
    expect(adopted.filter((r) => r.run_id === run.run_id)).toEqual([
      { run_id: run.run_id, execution: 1, previous_runner_id: 'r1', record_json: RECORD },
    ]);
    expect(adopted.filter((r) => r.run_id === orphaned.run_id)).toEqual([]);
    expect(await db.run.findUniqueOrThrow({ where: { id: orphaned.run_id } })).toMatchObject({
      state: 'ERROR',
      errorCode: 'resource_unavailable',
      runnerId: null,
      statusMessage: expect.stringContaining('no longer has') as unknown,
    });
    expect(await db.runLease.findUnique({ where: { runId: orphaned.run_id } })).toBeNull();
  });

  it('lets only the holder of an execution write or release its lease (no takeover by a guessed run ID)', async () => {
    const run = await started();
    await saveRunLease(deps, { ...run, record_json: RECORD });
    const intruder = { ...run, runner_id: 'r9' };
    expect(await refusal(saveRunLease(deps, { ...intruder, record_json: '{"evil":1}' }))).toBe('conflict');
    expect(await refusal(releaseRunLease(deps, intruder))).toBe('conflict');
    expect(await refusal(saveRunLease(deps, { ...run, execution: 2, record_json: '{}' }))).toBe('conflict');
    // The lease is still live and the record the holder's.
    expect(await mine('r9', run.run_id, later(1_000))).toEqual([]);
    expect((await mine('r9', run.run_id, later(EXPIRY_MS + 1_000)))[0]?.record_json).toBe(RECORD);
  });

  it('makes a released lease adoptable at once, by one replica only', async () => {
    const run = await started();
    await saveRunLease(deps, { ...run, record_json: RECORD });
    await releaseRunLease(deps, run);
    const now = later(0);
    const [a, b] = await Promise.all([mine('r2', run.run_id, now), mine('r3', run.run_id, now)]);
    expect([...a, ...b]).toHaveLength(1);
    // Adoption clears the release: the adopter's lease lives on its heartbeats.
    expect(await db.runLease.findUniqueOrThrow({ where: { runId: run.run_id } })).toMatchObject({
      releasedAt: null,
    });
  });

  /**
   * The holder writes while another replica's adoption (the real statement, held open in a transaction of its own)
   * has the run: the write waits for the run's row, then the adoption commits. What the write answered.
   */
  const writeDuringAdoption = async (
    write: (run: Awaited<ReturnType<typeof started>>) => Promise<unknown>,
    sql: string,
  ) => {
    const run = await started();
    await saveRunLease(deps, { ...run, record_json: RECORD });
    const adoptedAt = later(EXPIRY_MS + 1_000);
    const adopter = new pg.Client({ connectionString: database.url });
    await adopter.connect();
    try {
      await adopter.query('BEGIN');
      const taken = await adopter.query<{ id: string }>(ADOPT_SQL, [
        'r2',
        new Date(adoptedAt.getTime() - EXPIRY_MS),
        20,
        adoptedAt,
      ]);
      expect(taken.rows.map((r) => r.id)).toContain(run.run_id);
      const answer = refusal(write(run));
      const waiting = `SELECT 1 FROM pg_stat_activity
                        WHERE datname = current_database() AND wait_event_type = 'Lock' AND query = $1`;
      while ((await sqlPool(db).query(waiting, [sql])).rowCount === 0)
        await new Promise((resolve) => setImmediate(resolve));
      await adopter.query('COMMIT');
      return { run, answer: await answer };
    } finally {
      await adopter.end();
    }
  };

  it("refuses a holder's release that waited for the run while another replica adopted it", async () => {
    const { run, answer } = await writeDuringAdoption((held) => releaseRunLease(deps, held), RELEASE_SQL);
    expect(answer).toBe('conflict');
    // The adopter's lease stays live: a third replica cannot take the run from under it.
    expect(await db.runLease.findUniqueOrThrow({ where: { runId: run.run_id } })).toMatchObject({
      releasedAt: null,
    });
    expect(await mine('r3', run.run_id, later(EXPIRY_MS + 2_000))).toEqual([]);
  });

  it("keeps the adopter's record from a holder's save that waited for the run while it was adopted", async () => {
    const stale = JSON.stringify({ version: 1, from: 'the previous holder' });
    const { run } = await writeDuringAdoption(
      (held) => saveRunLease(deps, { ...held, record_json: stale }),
      SAVE_SQL,
    );
    // Once the adopter's lease expires too, the next replica gets the record the adopter took over.
    expect((await mine('r3', run.run_id, later(3 * EXPIRY_MS)))[0]?.record_json).toBe(RECORD);
  });

  it('lets a replica adopt between the lease expiry and the lost-runner bound, and the sweep then spares the run', async () => {
    const lostAfterMs = 2 * EXPIRY_MS;
    const sweeper = new LostRunnerSweeper(
      { db, kickOutbox: () => undefined, logger: createLogger({ service: 'test', level: 'silent' }) },
      lostAfterMs,
    );
    const run = await started();
    await saveRunLease(deps, { ...run, record_json: RECORD });
    await sweeper.sweep(later(0)); // watching from now on
    expect(await mine('r2', run.run_id, later(EXPIRY_MS + 1_000))).toHaveLength(1);
    // The first holder has been silent past the bound; the adopter took the lease 1 s past its expiry.
    await sweeper.sweep(later(lostAfterMs + 1_000));
    expect(await db.run.findUniqueOrThrow({ where: { id: run.run_id } })).toMatchObject({
      state: 'INPROGRESS',
      runnerId: 'r2',
    });
    await sweeper.stop();
  });

  it('forgets the record and the runner of an execution that ended: completed, completed after a cancel, cancelled (its runner gone silent), or its runner lost', async () => {
    const recorded = async () => {
      const run = await started();
      await saveRunLease(deps, { ...run, record_json: RECORD });
      expect(await db.runLease.count({ where: { runId: run.run_id } })).toBe(1);
      return run;
    };
    const complete = (run: Awaited<ReturnType<typeof started>>) =>
      completeRun({ db, debugWindowMinutes: 0, saveTranscript: () => Promise.resolve() }, succeeded(run));
    // A running run has no job in the queue to remove.
    const cancelDeps = { db, queue: {} as RunQueue };
    const completed = await recorded();
    await complete(completed);
    const cancelledThenCompleted = await recorded();
    await cancelRun(cancelDeps, caller, cancelledThenCompleted.run_id);
    // The run ended: its runner may not write the record again.
    expect(await refusal(saveRunLease(deps, { ...cancelledThenCompleted, record_json: RECORD }))).toBe(
      'conflict',
    );
    await complete(cancelledThenCompleted);
    const cancelled = await recorded();
    await cancelRun(cancelDeps, caller, cancelled.run_id);
    const lost = await recorded();
    const sweeper = new LostRunnerSweeper(
      { db, kickOutbox: () => undefined, logger: createLogger({ service: 'test', level: 'silent' }) },
      EXPIRY_MS,
    );
    await sweeper.sweep(later(0));
    await sweeper.sweep(later(EXPIRY_MS + 1_000));
    await sweeper.stop();

    const runs = [completed, cancelledThenCompleted, cancelled, lost].map((r) => r.run_id);
    expect(
      (await db.run.findMany({ where: { id: { in: runs } }, orderBy: { createdAt: 'asc' } })).map((r) => [
        r.state,
        r.runnerId,
      ]),
    ).toEqual([
      ['SUCCEEDED', null],
      ['CANCELLED', null],
      ['CANCELLED', null],
      ['ERROR', null],
    ]);
    expect(await db.runLease.count({ where: { runId: { in: runs } } })).toBe(0);
  });

  it('never adopts a run without a record, or one that ended', async () => {
    const unrecorded = await started();
    const ended = await started();
    await saveRunLease(deps, { ...ended, record_json: RECORD });
    await db.run.update({ where: { id: ended.run_id }, data: { state: 'SUCCEEDED' } });
    const adopted = await adoptRuns(deps, { runner_id: 'r2', limit: 20 }, later(EXPIRY_MS + 1_000));
    expect(adopted.map((r) => r.run_id)).not.toContain(unrecorded.run_id);
    expect(adopted.map((r) => r.run_id)).not.toContain(ended.run_id);
  });
});
