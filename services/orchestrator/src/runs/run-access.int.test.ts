import { createPrismaClient, type PrismaClient } from '@conveyor/db';
import { createLogger } from '@conveyor/logger';
import { createTestDatabase, uniqueName, type TestDatabase } from '@conveyor/testing';
import type { Caller } from '../auth/caller';
import { createTeam, createUser } from '../auth/team-admin';
import { CatalogModule } from '../catalog/catalog-module';
import { ModelCatalog } from '../catalog/model-catalog';
import { loadCatalogConfig } from '../config';
import { createRun } from './create-run';
import { PrismaRunReferences } from './prisma-run-references';
import { runOfRunKey } from './run-access';

const logger = createLogger({ service: 'test', level: 'silent' });

describe('runOfRunKey over real PostgreSQL', () => {
  let database: TestDatabase;
  let db: PrismaClient;

  const teamCaller = async (name: string): Promise<Caller> => {
    const team = await createTeam(db, name);
    const user = await createUser(db, { teamId: team.id, email: `${uniqueName('u')}@x.dev` });
    return {
      team_id: team.id,
      principal_type: 'USER',
      principal_id: user.id,
      role: 'ADMIN',
      api_key_id: 'key',
      run_id: '',
      display_name: '',
      email: '',
    };
  };
  const runOf = async (caller: Caller) =>
    (
      await createRun(
        {
          db,
          kickOutbox: () => undefined,
          defaultHarness: 'demo',
          references: new PrismaRunReferences(db),
          catalog: {
            skills: new CatalogModule({ config: loadCatalogConfig({}), db, logger }).skills,
            models: new ModelCatalog({ models: [{ id: 'm', provider: 'anthropic' }] }),
          },
        },
        caller,
        { prompt: 'go' },
      )
    ).runId;
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
