import { createPrismaClient, type PrismaClient } from '@conveyor/db';
import { AppError } from '@conveyor/errors';
import { createTestDatabase, type TestDatabase } from '@conveyor/testing';
import type { Caller } from '../auth/caller';
import { ModelCatalog } from '../catalog/model-catalog';
import { loadCliConfig } from '../config';
import { createRun } from '../runs/create-run';
import { SecretCipher } from '../secrets/secret-cipher';
import { readTeamSecretValue, writeTeamSecret } from '../secrets/team-secrets';
import { DEV_TEAM_ID, seedDev } from '../cli/seed-dev';
import { runDeps, teamAdmin } from '../test-support/run-scene';
import { claimRun } from './claim-run';
import { getHarnessCredential } from './harness-credential';
import { reportEvents } from './report-events';

describe('GetHarnessCredential over real PostgreSQL', () => {
  let database: TestDatabase;
  let db: PrismaClient;
  let caller: Caller;
  const cipher = new SecretCipher(Buffer.alloc(32, 7));
  const models = new ModelCatalog({
    run_budget_usd: 5,
    models: [
      {
        id: 'claude-sonnet-4',
        provider: 'anthropic',
        cost: { input_usd_per_million_tokens: 3, output_usd_per_million_tokens: 15 },
      },
      { id: 'gpt-5', provider: 'openai' },
    ],
  });
  const deps = () => runDeps(db, { defaultHarness: 'claude', models });

  beforeAll(async () => {
    database = await createTestDatabase();
    db = createPrismaClient(database.url);
    caller = await teamAdmin(db, 'Credentials');
  });

  afterAll(async () => {
    await db.$disconnect();
    await database.drop();
  });

  /** A claimed run of the given config: the runner `r1` holds execution 1. */
  const claimed = async (config: Record<string, unknown>) => {
    const { runId } = await createRun(deps(), caller, { prompt: 'fix it', config });
    await claimRun(db, { run_id: runId, execution: 1, runner_id: 'r1' });
    return { run_id: runId, execution: 1, runner_id: 'r1' };
  };

  const refusal = async (promise: Promise<unknown>): Promise<AppError> => {
    const err = await promise.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(AppError);
    return err as AppError;
  };

  it("hands the runner holding the run the key of the default team secret, the run's model, prices, budget and spending", async () => {
    await writeTeamSecret(db, cipher, {
      teamId: caller.team_id,
      name: 'ANTHROPIC_API_KEY',
      value: 'sk-ant-default',
    });
    const run = await claimed({});
    await reportEvents(db, {
      ...run,
      events_json: [JSON.stringify({ kind: 'usage', input_tokens: 10, output_tokens: 1, cost_usd: 0.25 })],
    });
    const credential = await getHarnessCredential({ db, cipher, models }, run);
    expect(credential).toEqual({
      provider: 'anthropic',
      api_key: 'sk-ant-default',
      secret_name: 'ANTHROPIC_API_KEY',
      models: ['claude-sonnet-4'],
      input_usd_per_million_tokens: 3,
      output_usd_per_million_tokens: 15,
      budget_usd: 5,
      spent_usd: 0.25,
    });
    // Another runner, or a stale execution, gets nothing.
    expect(
      (await refusal(getHarnessCredential({ db, cipher, models }, { ...run, runner_id: 'r2' }))).code,
    ).toBe('conflict');
  });

  it('uses the secret the run names and the model of its harness', async () => {
    await writeTeamSecret(db, cipher, {
      teamId: caller.team_id,
      name: 'team-openai',
      value: 'sk-openai-team',
    });
    const run = await claimed({
      harness: { type: 'codex' },
      harness_auth_secrets: { codex_auth_secret_name: 'team-openai' },
    });
    const credential = await getHarnessCredential({ db, cipher, models }, run);
    expect([credential.provider, credential.api_key, credential.models]).toEqual([
      'openai',
      'sk-openai-team',
      ['gpt-5'],
    ]);
  });

  it('is integration_not_configured when the secret is missing or cannot be decrypted', async () => {
    const noDefault = await refusal(
      getHarnessCredential({ db, cipher, models }, await claimed({ harness: { type: 'codex' } })),
    );
    expect(noDefault.code).toBe('integration_not_configured');
    expect(noDefault.message).toBe(
      'Team secret "OPENAI_API_KEY" (the default for the codex harness) does not exist; add the openai API key as that team secret',
    );

    const named = await claimed({ harness_auth_secrets: { claude_auth_secret_name: 'nope' } });
    const absent = await refusal(getHarnessCredential({ db, cipher, models }, named));
    expect(absent.code).toBe('integration_not_configured');
    expect(absent.message).toBe(
      'Team secret "nope" (harness_auth_secrets.claude_auth_secret_name) does not exist; add the anthropic API key as that team secret',
    );

    await writeTeamSecret(db, new SecretCipher(Buffer.alloc(32, 9)), {
      teamId: caller.team_id,
      name: 'other-key',
      value: 'sk-elsewhere',
    });
    const foreign = await claimed({ harness_auth_secrets: { claude_auth_secret_name: 'other-key' } });
    const undecryptable = await refusal(getHarnessCredential({ db, cipher, models }, foreign));
    expect(undecryptable.code).toBe('integration_not_configured');
    expect(undecryptable.message).toMatch(/could not be decrypted/);
  });

  it("seed-dev (npm start) turns provider keys of its environment into the dev team's default secrets", async () => {
    const keys = { CONVEYOR_SECRETS_KEY: Buffer.alloc(32, 3).toString('base64') };
    const seeded = await seedDev(
      db,
      loadCliConfig({ ...keys, ANTHROPIC_API_KEY: 'sk-ant-from-shell', GEMINI_API_KEY: ' ', PATH: '/bin' }),
    );
    expect(seeded.providerSecrets).toEqual(['ANTHROPIC_API_KEY']);
    expect(
      await readTeamSecretValue(
        db,
        SecretCipher.fromConfig({ ...keys, CONVEYOR_SECRETS_PREVIOUS_KEYS: [] }),
        DEV_TEAM_ID,
        'ANTHROPIC_API_KEY',
      ),
    ).toBe('sk-ant-from-shell');
    expect(
      await readTeamSecretValue(
        db,
        SecretCipher.fromConfig({ ...keys, CONVEYOR_SECRETS_PREVIOUS_KEYS: [] }),
        DEV_TEAM_ID,
        'GEMINI_API_KEY',
      ),
    ).toBeUndefined();
  });
});
