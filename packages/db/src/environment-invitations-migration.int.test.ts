import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { migrate, migrationsDir } from './migrator';
import { readMigrations } from './migration-files';
import { createScratchDatabase, withClient, type ScratchDatabase } from './test-support/scratch-database';

const INVITATIONS = '20261123210000_environment_invitations';

describe('migration environment_invitations', () => {
  let db: ScratchDatabase;
  let before: string;

  beforeAll(async () => {
    db = await createScratchDatabase('invitations');
    before = mkdtempSync(path.join(tmpdir(), 'migrations-before-'));
    for (const m of readMigrations().filter((m) => m.name < INVITATIONS))
      cpSync(path.join(migrationsDir, m.name), path.join(before, m.name), { recursive: true });
  });

  afterAll(async () => {
    await db.drop();
    rmSync(before, { recursive: true, force: true });
  });

  it('turns guest grants made without consent into pending invitations, and keeps link access', async () => {
    await migrate(db.url, { migrationsDir: before });
    await withClient(db.url, async (c) => {
      await c.query(`INSERT INTO "Team" ("id", "name") VALUES ('t1', 'Inviter'), ('t2', 'Guests')`);
      await c.query(
        `INSERT INTO "User" ("id", "teamId", "email", "displayName") VALUES ('u1', 't1', 'owner@a.test', 'Owner'), ('u2', 't2', 'Guest@B.test', 'Guest')`,
      );
      await c.query(
        `INSERT INTO "Environment" ("id", "teamId", "scopeType", "ownerId", "name", "createdById", "lastEditorId") VALUES ('envAAAAAAAAAAAAAAAAAAA', 't1', 'TEAM', 't1', 'Tools', 'u1', 'u1')`,
      );
      await c.query(
        `INSERT INTO "EnvironmentAccess" ("id", "environmentId", "principalId", "kind", "grantedById") VALUES ('eacc_g', 'envAAAAAAAAAAAAAAAAAAA', 'u2', 'GUEST', 'u1'), ('eacc_l', 'envAAAAAAAAAAAAAAAAAAA', 'u2', 'LINK', NULL)`,
      );
    });
    await migrate(db.url);
    await withClient(db.url, async (c) => {
      const invitations = await c.query(
        'SELECT "id", "environmentId", "email", "invitedById" FROM "EnvironmentInvitation"',
      );
      expect(invitations.rows).toEqual([
        {
          id: 'einv_eacc_g',
          environmentId: 'envAAAAAAAAAAAAAAAAAAA',
          email: 'guest@b.test',
          invitedById: 'u1',
        },
      ]);
      const grants = await c.query('SELECT "kind" FROM "EnvironmentAccess"');
      expect(grants.rows).toEqual([{ kind: 'LINK' }]);
    });
  });
});
