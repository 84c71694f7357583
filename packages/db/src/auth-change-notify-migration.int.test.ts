import { Client } from 'pg';
import { migrate } from './migrator';
import { createScratchDatabase, type ScratchDatabase } from './test-support/scratch-database';

// The triggers that tell the orchestrators (and through them the gateway's key cache) that what a key authenticates
// as may have changed: one notification per team for every such write, none for the lastUsedAt stamp.
describe('migration auth_change_notify', () => {
  let db: ScratchDatabase;
  let writer: Client;
  let listener: Client;
  const received: string[] = [];
  let marked: (() => void) | undefined;

  beforeAll(async () => {
    db = await createScratchDatabase('auth_notify');
    await migrate(db.url);
    writer = new Client({ connectionString: db.url });
    listener = new Client({ connectionString: db.url });
    await Promise.all([writer.connect(), listener.connect()]);
    listener.on('notification', (msg) => {
      if (msg.payload === 'mark') marked?.();
      else received.push(msg.payload ?? '');
    });
    await listener.query('LISTEN auth_changes');
  });

  afterAll(async () => {
    await Promise.all([writer?.end(), listener?.end()]);
    await db?.drop();
  });

  /**
   * What one statement notified: notifications arrive in commit order, so once a marker sent after it arrives,
   * everything the statement sent has too.
   */
  async function notifiedBy(sql: string): Promise<string[]> {
    received.length = 0;
    await writer.query(sql);
    const mark = new Promise<void>((resolve) => (marked = resolve));
    await writer.query(`SELECT pg_notify('auth_changes', 'mark')`);
    await mark;
    return [...received].sort();
  }

  // Through notifiedBy, so the setup's own notifications are all in before a test starts counting.
  beforeEach(() =>
    notifiedBy(`
      DELETE FROM "Team";
      INSERT INTO "Team" ("id", "name") VALUES ('t1', 'One'), ('t2', 'Two');
      INSERT INTO "User" ("id", "teamId", "email", "displayName") VALUES ('u1', 't1', 'a@t.test', 'A');
      INSERT INTO "AgentIdentity" ("id", "teamId", "name") VALUES ('a1', 't1', 'Bot');
      INSERT INTO "ApiKey" ("id", "teamId", "userId", "name", "prefix", "secretHash") VALUES ('k1', 't1', 'u1', 'cli', 'p1', 'h');
    `),
  );

  it('is silent for new rows and for the lastUsedAt stamp of authentication', async () => {
    expect(
      await notifiedBy(
        `INSERT INTO "ApiKey" ("id", "teamId", "userId", "name", "prefix", "secretHash") VALUES ('k2', 't1', 'u1', 'cli', 'p2', 'h')`,
      ),
    ).toEqual([]);
    expect(await notifiedBy(`UPDATE "ApiKey" SET "lastUsedAt" = now() WHERE "id" = 'k1'`)).toEqual([]);
  });

  it.each([
    ['a key revoked', `UPDATE "ApiKey" SET "revokedAt" = now() WHERE "id" = 'k1'`],
    ['a key expired by update', `UPDATE "ApiKey" SET "expiresAt" = now() WHERE "id" = 'k1'`],
    ['a key deleted', `DELETE FROM "ApiKey" WHERE "id" = 'k1'`],
    ['a role changed', `UPDATE "User" SET "role" = 'ADMIN' WHERE "id" = 'u1'`],
    ['a user removed', `DELETE FROM "User" WHERE "id" = 'u1'`],
    ['an agent identity renamed', `UPDATE "AgentIdentity" SET "name" = 'Other' WHERE "id" = 'a1'`],
    ['an agent identity deleted', `DELETE FROM "AgentIdentity" WHERE "id" = 'a1'`],
    ['a team changed', `UPDATE "Team" SET "agentIdentityLimit" = 0 WHERE "id" = 't1'`],
    ['a team deleted (its users, identities and keys with it)', `DELETE FROM "Team" WHERE "id" = 't1'`],
  ])('notifies the team once when %s', async (_what, sql) => {
    expect(await notifiedBy(sql)).toEqual(['t1']);
  });

  it("is silent for run-scoped keys, which are never cached: a run's end does not empty its team's cache", async () => {
    await writer.query(`INSERT INTO "Run" ("id", "teamId", "title", "prompt", "creatorId", "executorId", "conversationId", "sessionId")
      VALUES ('00000000-0000-0000-0000-000000000001', 't1', 'r', 'p', 'u1', 'u1', gen_random_uuid(), gen_random_uuid())`);
    await notifiedBy(
      `INSERT INTO "ApiKey" ("id", "teamId", "userId", "runId", "name", "prefix", "secretHash") VALUES ('kr', 't1', 'u1', '00000000-0000-0000-0000-000000000001', 'run', 'pr', 'h')`,
    );
    expect(await notifiedBy(`UPDATE "ApiKey" SET "revokedAt" = now() WHERE "id" = 'kr'`)).toEqual([]);
    expect(await notifiedBy(`DELETE FROM "ApiKey" WHERE "id" = 'kr'`)).toEqual([]);
  });

  it('notifies both teams when a user moves', async () => {
    expect(await notifiedBy(`UPDATE "User" SET "teamId" = 't2' WHERE "id" = 'u1'`)).toEqual(['t1', 't2']);
  });

  it('notifies every team (empty payload) when a table is truncated', async () => {
    expect(await notifiedBy(`TRUNCATE "ApiKey"`)).toEqual(['']);
  });
});
