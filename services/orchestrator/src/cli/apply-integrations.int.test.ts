import { execFile } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { createPrismaClient, type PrismaClient } from '@conveyor/db';
import { generateInstallationKeys } from '@conveyor/pki';
import {
  createTestDatabase,
  REDIS_URL,
  startScriptedGitHub,
  startScriptedLinear,
  startScriptedSlack,
  type ScriptedGitHub,
  type ScriptedLinear,
  type ScriptedSlack,
  type TestDatabase,
} from '@conveyor/testing';
import { readTeamSecretValue, writeTeamSecret } from '../secrets/team-secrets';
import { botToken } from '../integrations/slack/slack-apps';
import { githubAppKeyContext, linearKeyContext, SecretCipher } from '../secrets/secret-cipher';

// The built CLI, as `npm run conveyor` runs it (the test task builds first), against scripted Slack, GitHub and
// Linear APIs that check credentials as the real ones do.
const CLI = path.resolve(__dirname, '../../dist/cli/main.js');
const BOT_TOKEN = 'xoxb-111-222-good';
const LINEAR_KEY = 'lin_api_the-agents-key';
const keys = generateInstallationKeys();
const rsaKey = () => generateKeyPairSync('rsa', { modulusLength: 2048 });
const pem = (pair: ReturnType<typeof rsaKey>) =>
  pair.privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
/** The App as GitHub knows it: its JWTs are checked against `publicKey` (replaced when the key is rotated). */
const appKey = rsaKey();
const githubApp = { id: '4242', slug: 'acme-agent', publicKey: appKey.publicKey, installations: [1] };
/** Linear's side: the one key it accepts (replaced when the key is rotated). */
const linearOptions = { apiKey: LINEAR_KEY, viewer: { id: 'lin-user-agent', name: 'agent' } };

let root: string;
let slack: ScriptedSlack;
let github: ScriptedGitHub;
let linear: ScriptedLinear;
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
    GITHUB_API_URL: github.url,
    LINEAR_API_URL: linear.url,
    EGRESS_ALLOWED_ADDRESSES: [github.url, linear.url].map((u) => new URL(u).host).join(','),
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
const githubFile = (extra = '', key = '{secretName: GH_KEY}') =>
  `kind: github_app\napp_id: "4242"\nprivate_key: ${key}\nwebhook_secret: {secretName: GH_HOOK}\n${extra}`;
const linearFile = (extra = '', key = '{secretName: LIN_KEY}') =>
  `kind: linear\napi_key: ${key}\nwebhook_secret: {secretName: LIN_HOOK}\n${extra}`;
const secret = (teamId: string, name: string, value: string) =>
  writeTeamSecret(prisma, cipher, { teamId, name, value, createdById: teamId.replace('team', 'user') });
const readSecret = async (name: string): Promise<string> =>
  (await readTeamSecretValue(prisma, cipher, 'team_a', name))!;
/** Everything an apply may write, to show a refused one wrote nothing. */
const stored = () =>
  Promise.all([
    prisma.webhook.findMany({ orderBy: { id: 'asc' } }),
    prisma.gitHubApp.findMany({ orderBy: { id: 'asc' } }),
    prisma.linearIntegration.findMany({ orderBy: { id: 'asc' } }),
    prisma.slackApp.findMany({ orderBy: { id: 'asc' } }),
  ]);

// Each apply starts the CLI (seconds on a loaded machine); a test makes up to six.
jest.setTimeout(180_000);

describe('conveyor apply: integrations/<name>.yaml', () => {
  beforeAll(async () => {
    slack = await startScriptedSlack({ token: BOT_TOKEN, teamId: 'T0ACME', botUserId: 'U0BOT' });
    github = await startScriptedGitHub({ token: 'ghp_unused', branchExists: () => false, app: githubApp });
    linear = await startScriptedLinear(linearOptions);
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
    await github.close();
    await linear.close();
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
    // Said once: not also joined into a heading above the per-file lines.
    expect(stderr.split('a secret written into a definition file is refused')).toHaveLength(2);
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

  describe('kind github_app', () => {
    const appRequests = () => github.requests.filter((r) => r.path === '/app').length;
    const app = () =>
      prisma.gitHubApp.findUniqueOrThrow({
        where: { teamId_name: { teamId: 'team_a', name: 'gh' } },
        include: { webhook: true },
      });
    const storedKey = (row: Awaited<ReturnType<typeof app>>) =>
      cipher.decrypt(row.privateKeyCiphertext, row.privateKeyKeyId, githubAppKeyContext(row.id));

    beforeAll(async () => {
      await secret('team_a', 'GH_KEY', pem(appKey));
      await secret('team_a', 'GH_HOOK', 'github-webhook-secret-one');
      await secret('team_b', 'B_GH_KEY', pem(appKey));
    });

    it('refuses a private key written into the file, not repeating it', async () => {
      const before = await stored();
      const stderr = await refusal({ 'integrations/gh.yaml': githubFile('', JSON.stringify(pem(appKey))) });
      expect(stderr).toContain(
        'integrations/gh.yaml: private_key: a secret written into a definition file is refused',
      );
      expect(stderr).not.toContain(pem(appKey).split('\n')[1]);
      expect(await stored()).toEqual(before);
    });

    it('says of another team’s secret what it says of a missing one, and asks GitHub nothing', async () => {
      const missing = await refusal({ 'integrations/gh.yaml': githubFile('', '{secretName: NOPE}') });
      const otherTeams = await refusal({ 'integrations/gh.yaml': githubFile('', '{secretName: B_GH_KEY}') });
      const message = (name: string) =>
        `integrations/gh.yaml: private_key.secretName "${name}" does not name a team secret; create it first (PUT /v1/secrets/${name})`;
      expect(missing).toContain(message('NOPE'));
      expect(otherTeams).toContain(message('B_GH_KEY'));
      expect(otherTeams.replaceAll('B_GH_KEY', 'NOPE')).toBe(missing);
      expect(github.requests).toHaveLength(0);
      expect(await prisma.gitHubApp.count()).toBe(0);
    });

    it('creates the App (its key checked with GitHub), then unchanged, then updated by a field, a rotated secret and a rotated key', async () => {
      const first = await apply({ 'integrations/gh.yaml': githubFile('trigger_label: agent\n') });
      expect(first.integrations).toEqual([
        expect.objectContaining({ name: 'gh', kind: 'github_app', action: 'created' }),
      ]);
      // GET /app with a JWT the scripted GitHub verified against the App's public key.
      expect(appRequests()).toBe(1);
      const created = await app();
      expect(created).toMatchObject({
        id: first.integrations[0]!.id,
        definedAsCode: true,
        appId: '4242',
        slug: 'acme-agent',
        botLogin: 'acme-agent[bot]',
        triggerLabel: 'agent',
        webhook: {
          factoryId: 'fac_a',
          name: 'github-app-gh',
          signatureScheme: 'github',
          secretName: 'GH_HOOK',
        },
      });
      expect(storedKey(created)).toBe(pem(appKey));

      const again = await apply({ 'integrations/gh.yaml': githubFile('trigger_label: agent\n') });
      expect(again.integrations).toEqual([expect.objectContaining({ id: created.id, action: 'unchanged' })]);
      expect(appRequests()).toBe(1);
      expect((await app()).updatedAt).toEqual(created.updatedAt);

      const relabelled = await apply({ 'integrations/gh.yaml': githubFile('trigger_label: agent-please\n') });
      expect(relabelled.integrations).toEqual([
        expect.objectContaining({ id: created.id, action: 'updated', changed: ['trigger_label'] }),
      ]);
      expect(appRequests()).toBe(1);
      expect((await app()).triggerLabel).toBe('agent-please');

      await secret('team_a', 'GH_HOOK', 'github-webhook-secret-two');
      const rehooked = await apply({ 'integrations/gh.yaml': githubFile('trigger_label: agent-please\n') });
      expect(rehooked.integrations).toEqual([
        expect.objectContaining({ id: created.id, action: 'updated', changed: ['webhook_secret'] }),
      ]);

      const rotated = rsaKey();
      githubApp.publicKey = rotated.publicKey;
      await secret('team_a', 'GH_KEY', pem(rotated));
      const rekeyed = await apply({ 'integrations/gh.yaml': githubFile('trigger_label: agent-please\n') });
      expect(rekeyed.integrations).toEqual([
        expect.objectContaining({ id: created.id, action: 'updated', changed: ['private_key'] }),
      ]);
      expect(appRequests()).toBe(2);
      expect(storedKey(await app())).toBe(pem(rotated));
    });

    it("refuses a key GitHub refuses with GitHub's reason, and nothing of the whole apply is written", async () => {
      const current = await readSecret('GH_KEY');
      const before = await stored();
      await secret('team_a', 'GH_KEY', pem(rsaKey()));
      const stderr = await refusal({
        'webhooks/other.yaml': webhookFile,
        'integrations/gh.yaml': githubFile('trigger_label: another\n'),
      });
      expect(stderr).toContain(
        'integrations/gh.yaml: private_key: GitHub refused app_id and private_key: A JSON web token could not be decoded',
      );
      expect(await stored()).toEqual(before);
      await secret('team_a', 'GH_KEY', current);
    });
  });

  describe('kind linear', () => {
    const viewerCalls = () => linear.calls.filter((c) => c.operation === 'viewer').length;
    const integration = () =>
      prisma.linearIntegration.findUniqueOrThrow({
        where: { teamId_name: { teamId: 'team_a', name: 'lin' } },
        include: { webhook: true },
      });
    const storedKey = (row: Awaited<ReturnType<typeof integration>>) =>
      cipher.decrypt(row.apiKeyCiphertext, row.apiKeyKeyId, linearKeyContext(row.id));
    const repos = (...keys: string[]) =>
      `team_repositories: {${keys.map((k) => `${k}: "https://github.com/acme/${k.toLowerCase()}"`).join(', ')}}\n`;

    beforeAll(async () => {
      await secret('team_a', 'LIN_KEY', LINEAR_KEY);
      await secret('team_a', 'LIN_HOOK', 'linear-webhook-secret-one');
      await secret('team_b', 'B_LIN_KEY', LINEAR_KEY);
    });

    it('refuses an API key written into the file, not repeating it', async () => {
      const before = await stored();
      const stderr = await refusal({ 'integrations/lin.yaml': linearFile('', LINEAR_KEY) });
      expect(stderr).toContain(
        'integrations/lin.yaml: api_key: a secret written into a definition file is refused',
      );
      expect(stderr).not.toContain(LINEAR_KEY);
      expect(await stored()).toEqual(before);
    });

    it('says of another team’s secret what it says of a missing one, and asks Linear nothing', async () => {
      const missing = await refusal({ 'integrations/lin.yaml': linearFile('', '{secretName: NOPE}') });
      const otherTeams = await refusal({
        'integrations/lin.yaml': linearFile('', '{secretName: B_LIN_KEY}'),
      });
      const message = (name: string) =>
        `integrations/lin.yaml: api_key.secretName "${name}" does not name a team secret; create it first (PUT /v1/secrets/${name})`;
      expect(missing).toContain(message('NOPE'));
      expect(otherTeams).toContain(message('B_LIN_KEY'));
      expect(otherTeams.replaceAll('B_LIN_KEY', 'NOPE')).toBe(missing);
      expect(linear.calls).toHaveLength(0);
      expect(await prisma.linearIntegration.count()).toBe(0);
    });

    it('creates the integration (its key checked with Linear), then unchanged, then updated by a field, a rotated secret and a rotated key', async () => {
      const first = await apply({ 'integrations/lin.yaml': linearFile(repos('ENG')) });
      expect(first.integrations).toEqual([
        expect.objectContaining({ name: 'lin', kind: 'linear', action: 'created' }),
      ]);
      expect(linear.calls).toEqual([
        expect.objectContaining({ operation: 'viewer', authorization: LINEAR_KEY }),
      ]);
      const created = await integration();
      expect(created).toMatchObject({
        id: first.integrations[0]!.id,
        definedAsCode: true,
        agentUserId: 'lin-user-agent',
        agentName: 'agent',
        teamRepositories: { ENG: 'https://github.com/acme/eng' },
        webhook: {
          factoryId: 'fac_a',
          name: 'linear-lin',
          signatureScheme: 'linear',
          secretName: 'LIN_HOOK',
        },
      });
      expect(storedKey(created)).toBe(LINEAR_KEY);

      const again = await apply({ 'integrations/lin.yaml': linearFile(repos('ENG')) });
      expect(again.integrations).toEqual([expect.objectContaining({ id: created.id, action: 'unchanged' })]);
      expect(viewerCalls()).toBe(1);
      expect((await integration()).updatedAt).toEqual(created.updatedAt);

      const widened = await apply({ 'integrations/lin.yaml': linearFile(repos('OPS', 'ENG')) });
      expect(widened.integrations).toEqual([
        expect.objectContaining({ id: created.id, action: 'updated', changed: ['team_repositories'] }),
      ]);
      expect(viewerCalls()).toBe(1);
      // The same map in another order is the same map.
      const reordered = await apply({ 'integrations/lin.yaml': linearFile(repos('ENG', 'OPS')) });
      expect(reordered.integrations).toEqual([expect.objectContaining({ action: 'unchanged' })]);

      await secret('team_a', 'LIN_HOOK', 'linear-webhook-secret-two');
      const rehooked = await apply({ 'integrations/lin.yaml': linearFile(repos('ENG', 'OPS')) });
      expect(rehooked.integrations).toEqual([
        expect.objectContaining({ id: created.id, action: 'updated', changed: ['webhook_secret'] }),
      ]);

      linearOptions.apiKey = 'lin_api_the-rotated-key';
      await secret('team_a', 'LIN_KEY', linearOptions.apiKey);
      const rekeyed = await apply({ 'integrations/lin.yaml': linearFile(repos('ENG', 'OPS')) });
      expect(rekeyed.integrations).toEqual([
        expect.objectContaining({ id: created.id, action: 'updated', changed: ['api_key'] }),
      ]);
      expect(viewerCalls()).toBe(2);
      expect(storedKey(await integration())).toBe('lin_api_the-rotated-key');
    });

    it("refuses a key Linear refuses with Linear's reason, and nothing of the whole apply is written", async () => {
      const current = await readSecret('LIN_KEY');
      const before = await stored();
      await secret('team_a', 'LIN_KEY', 'lin_api_not-the-key');
      const stderr = await refusal({
        'webhooks/other.yaml': webhookFile,
        'integrations/gh.yaml': githubFile('trigger_label: another\n'),
        'integrations/lin.yaml': linearFile(repos('ENG')),
      });
      expect(stderr).toContain(
        'integrations/lin.yaml: api_key: Linear refused api_key: You need to authenticate to access this operation.',
      );
      expect(stderr).not.toContain('lin_api_not-the-key');
      expect(await stored()).toEqual(before);
      await secret('team_a', 'LIN_KEY', current);
    });
  });
});
