import { Redis } from 'ioredis';
import { createPrismaClient, type PrismaClient } from '@conveyor/db';
import { authEpochKeys } from '@conveyor/runtime';
import { apiCall, REDIS_URL, runCli, startPlatform, type RunningPlatform } from '@conveyor/testing';

jest.setTimeout(120_000);

// The gateway's key cache (docs/service-trust.md) over the real services: a change to what a key authenticates as,
// made by any writer, reaches the gateway through the database trigger, the orchestrator's LISTEN and the team's
// epoch in Redis; the first request after that bump is answered afresh.
describe('the gateway key cache serves no revoked key and no stale role', () => {
  let platform: RunningPlatform;
  let db: PrismaClient;
  let redis: Redis;
  let epochs: ReturnType<typeof authEpochKeys>;

  beforeAll(async () => {
    platform = await startPlatform({ withRunner: false });
    db = createPrismaClient(platform.databaseUrl);
    redis = new Redis(REDIS_URL);
    epochs = authEpochKeys(platform.env['AUTH_EPOCH_REDIS_PREFIX']!);
  });

  afterAll(async () => {
    redis?.disconnect();
    await db?.$disconnect();
    await platform?.stop();
  });

  const cli = async <T>(...args: string[]): Promise<T> => JSON.parse(await runCli(args, platform.env)) as T;

  /** A team of its own: no other test's changes bump its epoch. */
  const newTeam = async () =>
    (await cli<{ id: string }>('team', 'create', '--name', `Key cache ${Date.now()}`)).id;

  async function userWithKey(teamId: string, role: 'ADMIN' | 'MEMBER') {
    const email = `cache-${Date.now()}-${Math.random()}@security.test`;
    const user = await cli<{ id: string }>(
      'user',
      'create',
      '--team',
      teamId,
      '--role',
      role,
      '--email',
      email,
    );
    const key = await cli<{ id: string; key: string }>('key', 'create', '--user', user.id);
    return { userId: user.id, keyId: key.id, key: key.key };
  }

  /** Runs a write and waits until the orchestrator has bumped the team's epoch for it (milliseconds after commit). */
  async function changed(teamId: string, write: () => Promise<unknown>): Promise<void> {
    const before = await redis.get(epochs.team(teamId));
    await write();
    while ((await redis.get(epochs.team(teamId))) === before) await new Promise((r) => setTimeout(r, 10));
  }

  const listRuns = (key: string) => apiCall(platform, 'GET', '/agent/runs', undefined, key);
  /** Its first use learns the key's team, the second caches it: the third is the first served from the cache. */
  async function warm(key: string): Promise<void> {
    for (let i = 0; i < 3; i++) expect((await listRuns(key)).status).toBe(200);
  }

  it('is really used: a revocation that bypasses the triggers is not seen; one through them is, at the next request', async () => {
    const teamId = await newTeam();
    const { keyId, key } = await userWithKey(teamId, 'MEMBER');
    await warm(key);
    await db.$executeRawUnsafe(`ALTER TABLE "ApiKey" DISABLE TRIGGER "ApiKey_auth_change"`);
    try {
      await db.apiKey.update({ where: { id: keyId }, data: { revokedAt: new Date() } });
    } finally {
      await db.$executeRawUnsafe(`ALTER TABLE "ApiKey" ENABLE TRIGGER "ApiKey_auth_change"`);
    }
    // The orchestrator refuses this key; only the cache can still answer 200.
    expect((await listRuns(key)).status).toBe(200);

    await changed(teamId, () => db.apiKey.update({ where: { id: keyId }, data: { revokedAt: new Date() } }));
    expect((await listRuns(key)).status).toBe(401);
  });

  it('a key revoked with the CLI is refused at the next request although it was cached', async () => {
    const teamId = await newTeam();
    const { keyId, key } = await userWithKey(teamId, 'MEMBER');
    await warm(key);
    await changed(teamId, () => cli('key', 'revoke', '--id', keyId));
    expect((await listRuns(key)).status).toBe(401);
  });

  it("a user's role change takes effect at the next request, both ways", async () => {
    const teamId = await newTeam();
    const { userId, key } = await userWithKey(teamId, 'MEMBER');
    const admin = await userWithKey(teamId, 'ADMIN');
    const agent = await apiCall(platform, 'POST', '/agent/identities', { name: 'cache-probe' }, admin.key);
    expect(agent.status).toBe(201);
    // Listing an identity's keys is for team admins.
    const adminOnly = () =>
      apiCall(platform, 'GET', `/agent/identities/${String(agent.body['uid'])}/api-keys`, undefined, key);
    for (let i = 0; i < 3; i++) expect((await adminOnly()).status).toBe(403);

    await changed(teamId, () => db.user.update({ where: { id: userId }, data: { role: 'ADMIN' } }));
    expect((await adminOnly()).status).toBe(200);
    expect((await adminOnly()).status).toBe(200);
    await changed(teamId, () => db.user.update({ where: { id: userId }, data: { role: 'MEMBER' } }));
    expect((await adminOnly()).status).toBe(403);
  });

  it('a console session signed in with a cached key ends at the next request after the key is revoked', async () => {
    const teamId = await newTeam();
    const { keyId, key } = await userWithKey(teamId, 'MEMBER');
    const origin = new URL(platform.apiUrl).origin;
    const signIn = await fetch(`${origin}/console/api/session`, {
      method: 'POST',
      headers: { origin, 'content-type': 'application/json' },
      body: JSON.stringify({ api_key: key }),
    });
    expect(signIn.status).toBe(201);
    const cookie = signIn.headers.get('set-cookie')!.split(';')[0]!;
    const session = () => fetch(`${origin}/console/api/session`, { headers: { cookie } });
    for (let i = 0; i < 3; i++) expect((await session()).status).toBe(200);
    await changed(teamId, () => cli('key', 'revoke', '--id', keyId));
    expect((await session()).status).toBe(401);
  });

  it("a removed user's key is refused at the next request", async () => {
    const teamId = await newTeam();
    const { userId, key } = await userWithKey(teamId, 'MEMBER');
    await warm(key);
    await changed(teamId, () => db.user.delete({ where: { id: userId } }));
    expect((await listRuns(key)).status).toBe(401);
  });
});
