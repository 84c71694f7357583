import { createPrismaClient, type PrismaClient } from '@conveyor/db';
import { createTestDatabase, type TestDatabase } from '@conveyor/testing';
import type { Caller } from '../auth/caller';
import { runDeps, teamAdmin } from '../test-support/run-scene';
import { createRun } from './create-run';
import { runOfRunKey } from './run-access';

describe('runOfRunKey over real PostgreSQL', () => {
  let database: TestDatabase;
  let db: PrismaClient;

  const teamCaller = async (name: string): Promise<Caller> => ({
    ...(await teamAdmin(db, name)),
    api_key_id: 'key',
  });
  const runOf = async (caller: Caller) => (await createRun(runDeps(db), caller, { prompt: 'go' })).runId;
  const refusal = (promise: Promise<unknown>) =>
    promise.then(
      () => undefined,
      (err: { code?: string; message?: string }) => ({ code: err.code, message: err.message }),
    );

  beforeAll(async () => {
    database = await createTestDatabase();
    db = createPrismaClient(database.url);
  });

  afterAll(async () => {
    await db.$disconnect();
    await database.drop();
  });

  it("gives a run-scoped key its own run, and refuses a user's key and a key naming another team's run", async () => {
    const ours = await teamCaller('Ours');
    const theirs = await teamCaller('Theirs');
    const ownRun = await runOf(ours);
    const otherRun = await runOf(theirs);

    expect(await runOfRunKey(db, { ...ours, run_id: ownRun })).toMatchObject({ id: ownRun, execution: 1 });
    expect(await refusal(runOfRunKey(db, ours))).toEqual({
      code: 'not_authorized',
      message: 'Harness support requires the run-scoped API key of a run',
    });
    expect(await refusal(runOfRunKey(db, { ...ours, run_id: otherRun }))).toEqual({
      code: 'not_authorized',
      message: 'The run of this key no longer exists',
    });
  });
});
