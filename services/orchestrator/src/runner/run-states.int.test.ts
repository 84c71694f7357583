import { createPrismaClient, type PrismaClient } from '@conveyor/db';
import { AppError } from '@conveyor/errors';
import { createTestDatabase, type TestDatabase } from '@conveyor/testing';
import type { Caller } from '../auth/caller';
import { createRun } from '../runs/create-run';
import { runDeps, teamAdmin } from '../test-support/run-scene';
import { claimRun } from './claim-run';
import { reportEvents } from './report-events';
import { MAX_RUN_STATES, runStates, type RunStatesDeps } from './run-states';

const ABANDONED_MS = 60_000;

describe('GetRunStates over real PostgreSQL', () => {
  let database: TestDatabase;
  let db: PrismaClient;
  let caller: Caller;
  let deps: RunStatesDeps;

  beforeAll(async () => {
    database = await createTestDatabase();
    db = createPrismaClient(database.url);
    caller = await teamAdmin(db, 'Orphans');
    deps = { db, abandonedAfterMs: ABANDONED_MS };
  });

  afterAll(async () => {
    await db.$disconnect();
    await database.drop();
  });

  const queued = async () => (await createRun(runDeps(db), caller, { prompt: 'step' })).runId;
  const started = async () => {
    const runId = await queued();
    const execution = { run_id: runId, execution: 1, runner_id: 'r1' };
    await claimRun(db, execution);
    await reportEvents(db, {
      ...execution,
      events_json: [JSON.stringify({ kind: 'state_changed', from: 'PENDING', to: 'INPROGRESS' })],
    });
    return runId;
  };
  const later = (ms: number) => new Date(Date.now() + ms);

  it('answers each run with its state and current execution alone: active, ended, abandoned past the bound, missing', async () => {
    const waiting = await queued();
    const running = await started();
    const ended = await started();
    await db.run.update({ where: { id: ended }, data: { state: 'SUCCEEDED' } });
    // A run that went on as its third execution: its earlier executions' Pods are the reconciler's to collect.
    await db.run.update({ where: { id: running }, data: { execution: 3 } });
    const unknown = '0b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9';
    const asked = [waiting, running, ended, unknown, 'run-not-a-uuid'];

    expect(await runStates(deps, asked, later(ABANDONED_MS - 5_000))).toEqual([
      { run_id: waiting, state: 'ORPHAN_RUN_STATE_ACTIVE', execution: 1 },
      { run_id: running, state: 'ORPHAN_RUN_STATE_ACTIVE', execution: 3 },
      { run_id: ended, state: 'ORPHAN_RUN_STATE_ENDED', execution: 1 },
      { run_id: unknown, state: 'ORPHAN_RUN_STATE_MISSING', execution: 0 },
      { run_id: 'run-not-a-uuid', state: 'ORPHAN_RUN_STATE_MISSING', execution: 0 },
    ]);
    // No heartbeat past the bound: the running run is abandoned; a queued one (no runner) never is.
    const after = await runStates(deps, [waiting, running], later(ABANDONED_MS + 5_000));
    expect(after.map((r) => r.state)).toEqual(['ORPHAN_RUN_STATE_ACTIVE', 'ORPHAN_RUN_STATE_ABANDONED']);
  });

  it('refuses a batch above the bound', async () => {
    const ids = Array.from({ length: MAX_RUN_STATES + 1 }, (_, i) => `run-${i}`);
    const refused = await runStates(deps, ids).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(AppError);
    expect((refused as AppError).code).toBe('invalid_request');
  });
});
