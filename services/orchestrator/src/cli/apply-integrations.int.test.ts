import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { createPrismaClient, type PrismaClient } from '@conveyor/db';
import { generateInstallationKeys } from '@conveyor/pki';
import {
  createTestDatabase,
  REDIS_URL,
  startScriptedSlack,
  type ScriptedSlack,
  type TestDatabase,
} from '@conveyor/testing';
import { SecretCipher } from '../secrets/secret-cipher';
import { writeTeamSecret } from '../secrets/team-secrets';
import { botToken } from '../integrations/slack/slack-apps';

// The built CLI, as `npm run conveyor` runs it (the test task builds first), against a scripted Slack Web API.
const CLI = path.resolve(__dirname, '../../dist/cli/main.js');
const BOT_TOKEN = 'xoxb-111-222-good';
const keys = generateInstallationKeys();

let root: string;
let slack: ScriptedSlack;
let db: TestDatabase;
let prisma: PrismaClient;
const cipher = SecretCipher.fromConfig({ ...keys, CONVEYOR_SECRETS_PREVIOUS_KEYS: [] });

/** Replaces the definition directory with `files` and runs `conveyor apply` on it. */
async function apply(files: Record<string, string>) {
  const defs = await mkdtemp(path.join(root, 'defs-'));
  for (const [file, content] of Object.entries(files)) {
    await mkdir(path.join(defs, path.dirname(file)), { recursive: true });
    await writeFile(path.join(defs, file), content);
  }
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...keys,
    DATABASE_URL: db.url,
    REDIS_URL,
    SLACK_API_URL: slack.url,
  };
  const { stdout } = await promisify(execFile)(process.execPath, [CLI, 'apply', defs, '--factory', 'fac_a'], {
    env,
  });
  return JSON.parse(stdout) as {
    webhooks: Array<{ name: string; action: string }>;
    integrations: Array<{ name: string; kind: string; id: string; action: string; changed?: string[] }>;
  };
}

/** The apply's refusal (stderr of the failed command). */
const refusal = (files: Record<string, string>): Promise<string> =>
  apply(files).then(
    () => {
      throw new Error('apply succeeded');
    },
    (err: { stderr: string }) => err.stderr,
  );

const slackFile = (extra = '', token = '{secretName: SLACK_BOT}') =>
  `kind: slack\nbot_token: ${token}\nsigning_secret: {secretName: SLACK_SIGNING}\n${extra}`;
const webhookFile = 'authMode: token\nsecretName: HOOK\n';

describe('conveyor apply: integrations/<name>.yaml', () => {
  beforeAll(async () => {
    slack = await startScriptedSlack({ token: BOT_TOKEN, teamId: 'T0ACME', botUserId: 'U0BOT' });
    db = await createTestDatabase();
    prisma = createPrismaClient(db.url);
    for (const team of ['a', 'b']) {
      await prisma.team.create({ data: { id: `team_${team}`, name: team } });
      await prisma.user.create({
        data: {
          id: `user_${team}`,
          teamId: `team_${team}`,
          email: `${team}@x.dev`,
          displayName: team,
          role: 'ADMIN',
        },
      });
    }
    await prisma.factory.create({ data: { id: 'fac_a', teamId: 'team_a', name: 'a' } });
    const secret = (teamId: string, name: string, value: string) =>
      writeTeamSecret(prisma, cipher, { teamId, name, value, createdById: teamId.replace('team', 'user') });
    await secret('team_a', 'SLACK_BOT', BOT_TOKEN);
    await secret('team_a', 'SLACK_SIGNING', 'signing-secret-of-acme-app');
    await secret('team_a', 'HOOK', 'hunter2');
    // Only team b holds this one: team a's definitions must not reach it.
    await secret('team_b', 'B_BOT', BOT_TOKEN);
    root = await mkdtemp(path.join(os.tmpdir(), 'conveyor-intg-'));
  });

  afterAll(async () => {
    await prisma.$disconnect();
    await db.drop();
    await slack.close();
    await rm(root, { recursive: true, force: true });
  });

  it('refuses a secret written into the file, naming file and field and not repeating it; applies nothing', async () => {
    const stderr = await refusal({
      'webhooks/hook.yaml': webhookFile,
      'integrations/acme.yaml': slackFile('', BOT_TOKEN),
    });
    expect(stderr).toContain(
      'integrations/acme.yaml: bot_token: a secret written into a definition file is refused',
    );
    expect(stderr).not.toContain(BOT_TOKEN);
    expect(await prisma.webhook.count()).toBe(0);
    expect(await prisma.slackApp.count()).toBe(0);
  });

  it('refuses a secret name the team does not have, and says the same of another team’s secret', async () => {
    const missing = await refusal({
      'webhooks/hook.yaml': webhookFile,
      'integrations/acme.yaml': slackFile('', '{secretName: NOPE}'),
    });
    expect(missing).toContain(
      'integrations/acme.yaml: bot_token.secretName "NOPE" does not name a team secret; create it first (PUT /v1/secrets/NOPE)',
    );
    const otherTeams = await refusal({ 'integrations/acme.yaml': slackFile('', '{secretName: B_BOT}') });
    // Word for word the missing secret's answer: whether team b has it is not told.
    expect(otherTeams).toContain(
      'integrations/acme.yaml: bot_token.secretName "B_BOT" does not name a team secret; create it first (PUT /v1/secrets/B_BOT)',
    );
    expect(slack.requests).toHaveLength(0);
    expect(await prisma.webhook.count()).toBe(0);
    expect(await prisma.slackApp.count()).toBe(0);
  });

  it("refuses a setting the API's schema refuses, naming the field", async () => {
    const stderr = await refusal({ 'integrations/acme.yaml': slackFile('allowed_channels: [general]\n') });
    expect(stderr).toContain('integrations/acme.yaml: allowed_channels.0 Invalid');
    expect(await prisma.slackApp.count()).toBe(0);
  });

  it('creates the app with its webhook, then re-applying is a no-op and a changed field an update', async () => {
    const files = {
      'webhooks/hook.yaml': webhookFile,
      'integrations/acme.yaml': slackFile('allowed_channels: [C0AGENTS]\n'),
    };
    const first = await apply(files);
    expect(first.integrations).toEqual([
      expect.objectContaining({ name: 'acme', kind: 'slack', action: 'created' }),
    ]);
    expect(slack.requests.map((r) => r.method)).toEqual(['auth.test']);
    const app = await prisma.slackApp.findUniqueOrThrow({
      where: { teamId_name: { teamId: 'team_a', name: 'acme' } },
      include: { webhook: true },
    });
    expect(app).toMatchObject({
      id: first.integrations[0]!.id,
      definedAsCode: true,
      slackTeamId: 'T0ACME',
      botUserId: 'U0BOT',
      allowedChannels: ['C0AGENTS'],
      webhook: {
        factoryId: 'fac_a',
        name: 'slack-app-acme',
        signatureScheme: 'slack',
        secretName: 'SLACK_SIGNING',
      },
    });
    expect(botToken(cipher, app)).toBe(BOT_TOKEN);

    const again = await apply(files);
    expect(again.integrations).toEqual([expect.objectContaining({ id: app.id, action: 'unchanged' })]);
    // Unchanged credentials are not checked with Slack again, and the row is not written.
    expect(slack.requests).toHaveLength(1);
    expect((await prisma.slackApp.findUniqueOrThrow({ where: { id: app.id } })).updatedAt).toEqual(
      app.updatedAt,
    );

    const changed = await apply({
      ...files,
      'integrations/acme.yaml': slackFile('allowed_channels: [C0AGENTS, C0MORE]\n'),
    });
    expect(changed.integrations).toEqual([
      expect.objectContaining({ id: app.id, action: 'updated', changed: ['allowed_channels'] }),
    ]);
    expect((await prisma.slackApp.findUniqueOrThrow({ where: { id: app.id } })).allowedChannels).toEqual([
      'C0AGENTS',
      'C0MORE',
    ]);
  });

  it('leaves an integration whose file is gone alone, as applying does with every kind', async () => {
    const result = await apply({ 'webhooks/hook.yaml': webhookFile });
    expect(result.integrations).toEqual([]);
    expect(await prisma.slackApp.count({ where: { teamId: 'team_a', name: 'acme' } })).toBe(1);
  });

  it('does not take over an app registered through the API', async () => {
    await prisma.slackApp.update({
      where: { teamId_name: { teamId: 'team_a', name: 'acme' } },
      data: { definedAsCode: false },
    });
    const stderr = await refusal({ 'integrations/acme.yaml': slackFile('allowed_channels: [C0AGENTS]\n') });
    expect(stderr).toContain(
      'integrations/acme.yaml: a Slack app named "acme" is registered through the API; definitions cannot take it over',
    );
  });
});
