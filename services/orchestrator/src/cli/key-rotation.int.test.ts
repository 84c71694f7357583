import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseEnv, promisify } from 'node:util';
import { Client } from 'pg';
import { createPrismaClient, type PrismaClient } from '@conveyor/db';
import { generateInstallationKeys, initKeysFile } from '@conveyor/pki';
import { createTestDatabase, REDIS_URL, type TestDatabase } from '@conveyor/testing';
import { encryptEndpointSecret, signingSecrets } from '../events/endpoint-secret';
import { reencryptSecrets, SEALED_COLUMNS } from '../secrets/reencrypt-secrets';
import {
  githubAppKeyContext,
  linearKeyContext,
  runLeaseContext,
  SecretCipher,
  SecretCipherError,
  slackAppTokenContext,
} from '../secrets/secret-cipher';
import { readTeamSecretValue, writeTeamSecret } from '../secrets/team-secrets';
import { credentialColumns } from '../webhooks/webhook-config';
import { resolveWebhookForIngress } from '../webhooks/resolve-webhook-for-ingress';

// The built CLI, as `npm run conveyor` runs it (the test task builds first).
const CLI = path.resolve(__dirname, '../../dist/cli/main.js');

function conveyor(args: string[], env: { url: string; key: string; previous?: string[] }) {
  const vars: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: env.url,
    REDIS_URL,
    CONVEYOR_SECRETS_KEY: env.key,
    CONVEYOR_SECRETS_PREVIOUS_KEYS: (env.previous ?? []).join(','),
  };
  return promisify(execFile)(process.execPath, [CLI, ...args], { env: vars });
}

/** Stands in for a GitHub App's PEM key: only its sealing matters here. */
const APP_KEY = '-----BEGIN RSA PRIVATE KEY-----\nrotation\n-----END RSA PRIVATE KEY-----';
const BOT_TOKEN = 'xoxb-rotation-token';

/** Stands in for a Linear integration's API key. */
const LINEAR_KEY = 'lin_api_rotation';

const cipherOf = (key: string, previous: string[] = []) =>
  SecretCipher.fromConfig({ CONVEYOR_SECRETS_KEY: key, CONVEYOR_SECRETS_PREVIOUS_KEYS: previous });

interface RotateReport {
  currentKeyId: string;
  columns: Array<{ column: string; reencrypted: number; changedMeanwhile: number; failed: unknown[] }>;
  census: Array<{ column: string; keyId: string; values: number }>;
  oldKeysStillInUse: string[];
}

describe('conveyor keys rotate: finishing a CONVEYOR_SECRETS_KEY rotation', () => {
  let db: TestDatabase;
  let prisma: PrismaClient;
  const oldKey = generateInstallationKeys().CONVEYOR_SECRETS_KEY;
  const newKey = generateInstallationKeys().CONVEYOR_SECRETS_KEY;
  const old = cipherOf(oldKey);
  const TEAM = 'team_rot';
  const secretNames = ['ANTHROPIC_API_KEY', 'HOOK', 'S3', 'S4', 'S5'];
  const RUN_ID = '00000000-0000-4000-8000-000000000001';
  const LEASE_RECORD = '{"modelToken":"mt-rot"}';

  beforeAll(async () => {
    db = await createTestDatabase();
    prisma = createPrismaClient(db.url);
    await prisma.team.create({ data: { id: TEAM, name: 'Rotation' } });
    await prisma.factory.create({ data: { id: 'fac_rot', teamId: TEAM, name: 'rot' } });
    // Everything the orchestrator encrypts, written under the old key: team secrets (provider keys among them),
    // a webhook credential, an event endpoint's signing secret and its rotated-out predecessor.
    for (const name of secretNames)
      await writeTeamSecret(prisma, old, { teamId: TEAM, name, value: `value of ${name}` });
    await prisma.webhook.create({
      data: {
        id: 'wh_rot',
        teamId: TEAM,
        factoryId: 'fac_rot',
        name: 'hook',
        secretName: 'HOOK',
        ...credentialColumns(old, 'wh_rot', 'webhook credential'),
      },
    });
    const previous = encryptEndpointSecret(old, 'ep_rot', 'whsec_previous');
    await prisma.eventEndpoint.create({
      data: {
        id: 'ep_rot',
        teamId: TEAM,
        url: 'https://example.test/events',
        eventTypes: ['*'],
        ...encryptEndpointSecret(old, 'ep_rot', 'whsec_current'),
        previousCiphertext: previous.secretCiphertext,
        previousKeyId: previous.secretKeyId,
        previousSecretUntil: new Date(Date.now() + 3_600_000),
      },
    });
    const appKey = old.encrypt(APP_KEY, githubAppKeyContext('gha_rot'));
    await prisma.gitHubApp.create({
      data: {
        id: 'gha_rot',
        teamId: TEAM,
        name: 'app',
        appId: '1',
        slug: 'app',
        botLogin: 'app[bot]',
        privateKeyCiphertext: new Uint8Array(appKey.ciphertext),
        privateKeyKeyId: appKey.keyId,
        webhookId: 'wh_rot',
      },
    });
    await prisma.webhook.create({
      data: { id: 'wh_rot_slack', teamId: TEAM, factoryId: 'fac_rot', name: 'slack', secretName: 'S4' },
    });
    const botToken = old.encrypt(BOT_TOKEN, slackAppTokenContext('sla_rot'));
    await prisma.slackApp.create({
      data: {
        id: 'sla_rot',
        teamId: TEAM,
        name: 'slack',
        slackTeamId: 'T1',
        botUserId: 'U1',
        botTokenCiphertext: new Uint8Array(botToken.ciphertext),
        botTokenKeyId: botToken.keyId,
        webhookId: 'wh_rot_slack',
      },
    });
    const linearKey = old.encrypt(LINEAR_KEY, linearKeyContext('lin_rot'));
    await prisma.linearIntegration.create({
      data: {
        id: 'lin_rot',
        teamId: TEAM,
        name: 'linear',
        apiKeyCiphertext: new Uint8Array(linearKey.ciphertext),
        apiKeyKeyId: linearKey.keyId,
        agentUserId: 'user',
        agentName: 'agent',
        webhookId: 'wh_rot',
      },
    });
    // A run's adoption record (its run key and model token), bound to the run's ID, not the lease row's.
    await prisma.run.create({
      data: {
        id: RUN_ID,
        teamId: TEAM,
        title: 'rot',
        prompt: 'rot',
        creatorId: 'u',
        executorId: 'u',
        conversationId: RUN_ID,
        sessionId: RUN_ID,
      },
    });
    const record = old.encrypt(LEASE_RECORD, runLeaseContext(RUN_ID));
    await prisma.runLease.create({
      data: {
        id: 'lease_rot',
        runId: RUN_ID,
        execution: 1,
        recordCiphertext: new Uint8Array(record.ciphertext),
        recordKeyId: record.keyId,
        updatedAt: new Date(),
      },
    });
  });

  afterAll(async () => {
    await prisma.$disconnect();
    await db.drop();
  });

  it('lists every encrypted column of the schema (a new one must be added to SEALED_COLUMNS)', async () => {
    // A table holding a key id beside bytes is a table of ciphertexts.
    const client = new Client({ connectionString: db.url });
    await client.connect();
    const { rows } = await client.query<{ table_name: string; column_name: string }>(`
      SELECT c.table_name, c.column_name FROM information_schema.columns c
       WHERE c.table_schema = 'public' AND c.data_type = 'bytea'
         AND EXISTS (SELECT 1 FROM information_schema.columns k
                      WHERE k.table_schema = 'public' AND k.table_name = c.table_name
                        AND k.column_name ILIKE '%keyid')
       ORDER BY 1, 2`);
    await client.end();
    expect(rows.map((r) => `${r.table_name}.${r.column_name}`)).toEqual(
      SEALED_COLUMNS.map((c) => `${c.table}.${c.ciphertext}`).sort(),
    );
  });

  it('re-encrypts every row in batches, after which the old key can be dropped and everything decrypts', async () => {
    const updatedBefore = await prisma.teamSecret.findFirstOrThrow({ where: { name: 'S3' } });
    const { stdout, stderr } = await conveyor(['keys', 'rotate', '--batch-size', '2'], {
      url: db.url,
      key: newKey,
      previous: [oldKey],
    });
    const report = JSON.parse(stdout) as RotateReport;
    expect(report.columns).toEqual([
      { column: 'TeamSecret.ciphertext', reencrypted: 5, changedMeanwhile: 0, failed: [] },
      { column: 'Webhook.secretCiphertext', reencrypted: 1, changedMeanwhile: 0, failed: [] },
      { column: 'EventEndpoint.secretCiphertext', reencrypted: 1, changedMeanwhile: 0, failed: [] },
      { column: 'EventEndpoint.previousCiphertext', reencrypted: 1, changedMeanwhile: 0, failed: [] },
      { column: 'GitHubApp.privateKeyCiphertext', reencrypted: 1, changedMeanwhile: 0, failed: [] },
      { column: 'SlackApp.botTokenCiphertext', reencrypted: 1, changedMeanwhile: 0, failed: [] },
      { column: 'LinearIntegration.apiKeyCiphertext', reencrypted: 1, changedMeanwhile: 0, failed: [] },
      { column: 'RunLease.recordCiphertext', reencrypted: 1, changedMeanwhile: 0, failed: [] },
    ]);
    expect(report.oldKeysStillInUse).toEqual([]);
    expect(new Set(report.census.map((c) => c.keyId))).toEqual(new Set([cipherOf(newKey).keyId]));
    // Progress per batch of 2: three batches for five team secrets.
    expect(stderr.match(/"column":"TeamSecret.ciphertext"/g)).toHaveLength(3);
    // The value did not change, so neither does its updatedAt.
    expect((await prisma.teamSecret.findFirstOrThrow({ where: { name: 'S3' } })).updatedAt).toEqual(
      updatedBefore.updatedAt,
    );

    // The old key is gone: only the new one is configured, and every value still decrypts in its own row.
    const onlyNew = cipherOf(newKey);
    for (const name of secretNames)
      expect(await readTeamSecretValue(prisma, onlyNew, TEAM, name)).toBe(`value of ${name}`);
    expect(await resolveWebhookForIngress({ db: prisma, cipher: onlyNew }, 'wh_rot')).toMatchObject({
      secret: 'webhook credential',
    });
    const endpoint = await prisma.eventEndpoint.findUniqueOrThrow({ where: { id: 'ep_rot' } });
    expect(signingSecrets(onlyNew, endpoint, new Date())).toEqual(['whsec_current', 'whsec_previous']);
    const app = await prisma.gitHubApp.findUniqueOrThrow({ where: { id: 'gha_rot' } });
    expect(onlyNew.decrypt(app.privateKeyCiphertext, app.privateKeyKeyId, githubAppKeyContext(app.id))).toBe(
      APP_KEY,
    );
    const slack = await prisma.slackApp.findUniqueOrThrow({ where: { id: 'sla_rot' } });
    expect(
      onlyNew.decrypt(slack.botTokenCiphertext, slack.botTokenKeyId, slackAppTokenContext(slack.id)),
    ).toBe(BOT_TOKEN);
    const linear = await prisma.linearIntegration.findUniqueOrThrow({ where: { id: 'lin_rot' } });
    expect(onlyNew.decrypt(linear.apiKeyCiphertext, linear.apiKeyKeyId, linearKeyContext(linear.id))).toBe(
      LINEAR_KEY,
    );
    const lease = await prisma.runLease.findUniqueOrThrow({ where: { runId: RUN_ID } });
    expect(onlyNew.decrypt(lease.recordCiphertext, lease.recordKeyId, runLeaseContext(RUN_ID))).toBe(
      LEASE_RECORD,
    );
    // And the old key alone reads nothing any more.
    await expect(readTeamSecretValue(prisma, old, TEAM, 'HOOK')).rejects.toThrow(SecretCipherError);
  });

  it('is idempotent: a second run re-encrypts nothing', async () => {
    const { stdout } = await conveyor(['keys', 'rotate'], { url: db.url, key: newKey, previous: [oldKey] });
    const report = JSON.parse(stdout) as RotateReport;
    expect(report.columns.map((c) => c.reencrypted)).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
  });

  it('keeps the row binding: a ciphertext moved to another row still does not decrypt there', async () => {
    const hook = await prisma.teamSecret.findFirstOrThrow({ where: { name: 'HOOK' } });
    await prisma.teamSecret.update({ where: { id: hook.id }, data: { name: 'MOVED' } });
    await expect(readTeamSecretValue(prisma, cipherOf(newKey), TEAM, 'MOVED')).rejects.toThrow(
      SecretCipherError,
    );
    await prisma.teamSecret.update({ where: { id: hook.id }, data: { name: 'HOOK' } });
  });

  it('leaves a row it cannot decrypt as it is, names it (never its value) and fails; the rest goes through', async () => {
    const stranger = cipherOf(generateInstallationKeys().CONVEYOR_SECRETS_KEY);
    const lost = await writeTeamSecret(prisma, stranger, { teamId: TEAM, name: 'LOST', value: 'unreadable' });
    await writeTeamSecret(prisma, old, { teamId: TEAM, name: 'S6', value: 'value of S6' });
    const failure = await conveyor(['keys', 'rotate'], { url: db.url, key: newKey, previous: [oldKey] }).then(
      () => undefined,
      (err: { code: number; stdout: string }) => err,
    );
    expect(failure?.code).toBe(1);
    const report = JSON.parse(failure!.stdout) as RotateReport;
    expect(report.columns[0]).toEqual({
      column: 'TeamSecret.ciphertext',
      reencrypted: 1,
      changedMeanwhile: 0,
      failed: [{ id: lost.id, keyId: stranger.keyId, reason: expect.stringContaining('no key with id') }],
    });
    expect(failure!.stdout).not.toContain('unreadable');
    expect(report.oldKeysStillInUse).toEqual([stranger.keyId]);
    expect(await readTeamSecretValue(prisma, cipherOf(newKey), TEAM, 'S6')).toBe('value of S6');
  });

  it('`keys status` counts the values under each key', async () => {
    const { stdout } = await conveyor(['keys', 'status'], { url: db.url, key: newKey });
    const status = JSON.parse(stdout) as Omit<RotateReport, 'columns'>;
    expect(status.currentKeyId).toBe(cipherOf(newKey).keyId);
    expect(status.census).toContainEqual({
      column: 'TeamSecret.ciphertext',
      keyId: cipherOf(newKey).keyId,
      values: 6,
    });
  });
});

describe('reencryptSecrets beside a concurrent writer', () => {
  let db: TestDatabase;
  let prisma: PrismaClient;
  const oldKey = generateInstallationKeys().CONVEYOR_SECRETS_KEY;
  const newKey = generateInstallationKeys().CONVEYOR_SECRETS_KEY;

  beforeAll(async () => {
    db = await createTestDatabase();
    prisma = createPrismaClient(db.url);
    await prisma.team.create({ data: { id: 'team_race', name: 'Race' } });
    await writeTeamSecret(prisma, cipherOf(oldKey), { teamId: 'team_race', name: 'RACE', value: 'first' });
  });

  afterAll(async () => {
    await prisma.$disconnect();
    await db.drop();
  });

  it('never overwrites a value written between its read and its write', async () => {
    // An orchestrator not yet given the new key replaces the secret just before the rotation writes its copy.
    let raced = false;
    const racing = new Proxy(prisma, {
      get(target, prop, receiver) {
        if (prop !== '$executeRaw') return Reflect.get(target, prop, receiver) as unknown;
        return async (...args: Parameters<PrismaClient['$executeRaw']>) => {
          if (!raced) {
            raced = true;
            await writeTeamSecret(target, cipherOf(oldKey), {
              teamId: 'team_race',
              name: 'RACE',
              value: 'newer',
            });
          }
          return target.$executeRaw(...args);
        };
      },
    });
    const cipher = cipherOf(newKey, [oldKey]);
    const [teamSecrets] = await reencryptSecrets(racing, cipher, { batchSize: 10 });
    expect(teamSecrets).toMatchObject({ reencrypted: 0, changedMeanwhile: 1 });
    expect(await readTeamSecretValue(prisma, cipher, 'team_race', 'RACE')).toBe('newer');
    // A rerun (the command is resumable) picks the newer value up.
    const [again] = await reencryptSecrets(prisma, cipher, { batchSize: 10 });
    expect(again).toMatchObject({ reencrypted: 1, changedMeanwhile: 0 });
    expect(await readTeamSecretValue(prisma, cipherOf(newKey), 'team_race', 'RACE')).toBe('newer');
  });
});

describe('the whole rotation on an npm start installation (keys in $CONVEYOR_DATA_DIR/keys.env)', () => {
  let db: TestDatabase;
  let prisma: PrismaClient;
  let dataDir: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    prisma = createPrismaClient(db.url);
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'conveyor-rotation-'));
    await initKeysFile(path.join(dataDir, 'keys.env'));
  });

  afterAll(async () => {
    await prisma.$disconnect();
    await db.drop();
    await rm(dataDir, { recursive: true, force: true });
  });

  const keysFile = () => path.join(dataDir, 'keys.env');
  const fileKeys = async () => parseEnv(await readFile(keysFile(), 'utf8'));
  // The CLI as an operator runs it: no key in the environment, the installation's keys file instead.
  const cli = (args: string[]) => {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      DATABASE_URL: db.url,
      REDIS_URL,
      CONVEYOR_DATA_DIR: dataDir,
    };
    delete env.CONVEYOR_SECRETS_KEY;
    delete env.CONVEYOR_SECRETS_PREVIOUS_KEYS;
    delete env.BLOB_SIGNING_SECRET;
    return promisify(execFile)(process.execPath, [CLI, ...args], { env });
  };

  it('roll, rotate, drop-previous: the secret written under the first key reads with the last one alone', async () => {
    const first = await fileKeys();
    await prisma.team.create({ data: { id: 'team_file', name: 'File' } });
    await writeTeamSecret(prisma, cipherOf(first.CONVEYOR_SECRETS_KEY!), {
      teamId: 'team_file',
      name: 'OPENAI_API_KEY',
      value: 'sk-kept',
    });
    await cli(['keys', 'roll', '--file', keysFile(), '--key', 'secrets']);
    const rotated = JSON.parse((await cli(['keys', 'rotate'])).stdout) as RotateReport;
    expect(rotated.columns[0]).toMatchObject({ reencrypted: 1, failed: [] });
    expect(rotated.oldKeysStillInUse).toEqual([]);
    await cli(['keys', 'drop-previous', '--file', keysFile(), '--key', 'secrets']);

    const last = await fileKeys();
    expect(last.CONVEYOR_SECRETS_PREVIOUS_KEYS).toBeUndefined();
    expect(last.CONVEYOR_SECRETS_KEY).not.toBe(first.CONVEYOR_SECRETS_KEY);
    expect(
      await readTeamSecretValue(prisma, cipherOf(last.CONVEYOR_SECRETS_KEY!), 'team_file', 'OPENAI_API_KEY'),
    ).toBe('sk-kept');
  });
});
