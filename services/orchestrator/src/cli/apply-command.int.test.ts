import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { createPrismaClient, type PrismaClient } from '@conveyor/db';
import { generateInstallationKeys } from '@conveyor/pki';
import { createTestDatabase, REDIS_URL, type TestDatabase } from '@conveyor/testing';
import { SecretCipher } from '../secrets/secret-cipher';
import { writeTeamSecret } from '../secrets/team-secrets';

// The built CLI, as `npm run conveyor` runs it (the test task builds first).
const CLI = path.resolve(__dirname, '../../dist/cli/main.js');

/** `conveyor apply` from `cwd` (an installation root), with the installation keys absent from the environment. */
function apply(cwd: string, databaseUrl: string, dataDir?: string) {
  const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: databaseUrl, REDIS_URL };
  delete env.CONVEYOR_SECRETS_KEY;
  delete env.BLOB_SIGNING_SECRET;
  delete env.CONVEYOR_DATA_DIR;
  if (dataDir) env.CONVEYOR_DATA_DIR = dataDir;
  const defs = path.join(root, 'defs');
  return promisify(execFile)(process.execPath, [CLI, 'apply', defs, '--factory', 'fac_cli'], { cwd, env });
}

let root: string;

describe('conveyor apply on an npm start installation', () => {
  let db: TestDatabase;
  let prisma: PrismaClient;
  const keys = generateInstallationKeys();

  beforeAll(async () => {
    db = await createTestDatabase();
    prisma = createPrismaClient(db.url);
    await prisma.team.create({ data: { id: 'team_cli', name: 'CLI' } });
    await prisma.user.create({
      data: { id: 'user_cli', teamId: 'team_cli', email: 'a@cli.dev', displayName: 'A', role: 'ADMIN' },
    });
    await prisma.factory.create({ data: { id: 'fac_cli', teamId: 'team_cli', name: 'cli' } });
    root = await mkdtemp(path.join(os.tmpdir(), 'conveyor-cli-'));
    // A token webhook on a team secret: apply decrypts it, so it needs the installation's CONVEYOR_SECRETS_KEY.
    await mkdir(path.join(root, 'defs/webhooks'), { recursive: true });
    await writeFile(path.join(root, 'defs/webhooks/hook.yaml'), 'authMode: token\nsecretName: HOOK\n');
    const cipher = SecretCipher.fromConfig({ ...keys, CONVEYOR_SECRETS_PREVIOUS_KEYS: [] });
    await writeTeamSecret(prisma, cipher, {
      teamId: 'team_cli',
      name: 'HOOK',
      value: 'hunter2',
      createdById: 'user_cli',
    });
  });

  afterAll(async () => {
    await prisma.$disconnect();
    await db.drop();
    await rm(root, { recursive: true, force: true });
  });

  it('without .conveyor/keys.env, names the missing key', async () => {
    await expect(apply(root, db.url)).rejects.toMatchObject({
      stderr: expect.stringContaining('CONVEYOR_SECRETS_KEY is required'),
    });
  });

  it('reads the unset keys from .conveyor/keys.env and says so', async () => {
    await mkdir(path.join(root, '.conveyor'));
    await writeFile(
      path.join(root, '.conveyor/keys.env'),
      `# generated\n${Object.entries(keys)
        .map(([k, v]) => `${k}=${v}`)
        .join('\n')}\n`,
    );
    const { stdout, stderr } = await apply(root, db.url);
    expect(stderr).toContain('BLOB_SIGNING_SECRET, CONVEYOR_SECRETS_KEY not set; using .conveyor/keys.env');
    expect(JSON.parse(stdout)).toMatchObject({ webhooks: [expect.objectContaining({ name: 'hook' })] });
    expect(await prisma.webhook.count({ where: { factoryId: 'fac_cli' } })).toBe(1);
  });

  it("reads them from an installation's CONVEYOR_DATA_DIR, wherever it runs", async () => {
    const dataDir = path.join(root, '.conveyor');
    const { stderr } = await apply(os.tmpdir(), db.url, dataDir);
    expect(stderr).toContain(`not set; using ${path.join(dataDir, 'keys.env')}`);
  });
});
