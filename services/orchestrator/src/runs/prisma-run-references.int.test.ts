import { createPrismaClient, newEnvironmentId, newId, newUuid, type PrismaClient } from '@conveyor/db';
import type { Caller__Output } from '@conveyor/proto';
import { createTestDatabase, type TestDatabase } from '@conveyor/testing';
import { createTeam, createUser } from '../auth/team-admin';
import { PrismaRunReferences } from './prisma-run-references';

// The answers create-run.test.ts takes from its in-memory references, given by PostgreSQL: each read is scoped to
// the caller's team, and a member is found by user ID or by email in any case.

let database: TestDatabase;
let db: PrismaClient;
let references: PrismaRunReferences;

beforeAll(async () => {
  database = await createTestDatabase();
  db = createPrismaClient(database.url);
  references = new PrismaRunReferences(db);
});

afterAll(async () => {
  await db?.$disconnect();
  await database?.drop();
});

const callerOf = (teamId: string, userId: string): Caller__Output => ({
  team_id: teamId,
  principal_type: 'USER',
  principal_id: userId,
  role: 'MEMBER',
  api_key_id: '',
  run_id: '',
  display_name: '',
  email: '',
});

async function newTeam() {
  const team = await createTeam(db, 'team');
  const user = await createUser(db, { teamId: team.id, email: `Ada.${team.id}@Example.com` });
  return { teamId: team.id, user, caller: callerOf(team.id, user.id) };
}

const newIdentity = (teamId: string, createdAt: Date) =>
  db.agentIdentity.create({ data: { id: newId('agent'), teamId, name: 'agent', createdAt } });

const newRun = (teamId: string, ancestorIds: string[] = []) =>
  db.run.create({
    data: {
      id: newUuid(),
      teamId,
      title: 't',
      prompt: 'p',
      creatorId: 'user',
      executorId: 'user',
      conversationId: newUuid(),
      sessionId: newUuid(),
      ancestorIds,
    },
  });

describe('PrismaRunReferences', () => {
  it("finds an identity of the team and no other team's", async () => {
    const [ours, theirs] = [await newTeam(), await newTeam()];
    const identity = await newIdentity(ours.teamId, new Date());
    expect(await references.findIdentity(ours.teamId, identity.id)).toMatchObject({ id: identity.id });
    expect(await references.findIdentity(theirs.teamId, identity.id)).toBeNull();
  });

  it("answers the team's oldest identities up to its plan limit", async () => {
    const { teamId } = await newTeam();
    await db.team.update({ where: { id: teamId }, data: { agentIdentityLimit: 1 } });
    const oldest = await newIdentity(teamId, new Date(Date.parse('2026-01-01T00:00:00Z')));
    await newIdentity(teamId, new Date(Date.parse('2026-01-02T00:00:00Z')));
    expect([...(await references.availableIdentityIds(teamId))]).toEqual([oldest.id]);
  });

  it('finds an environment the caller reaches; another team’s and a malformed ID are none', async () => {
    const [ours, theirs] = [await newTeam(), await newTeam()];
    const env = await db.environment.create({
      data: {
        id: newEnvironmentId(),
        teamId: ours.teamId,
        ownerId: ours.teamId,
        name: 'env',
        createdById: ours.user.id,
        lastEditorId: ours.user.id,
      },
    });
    expect(await references.findEnvironment(ours.caller, env.id)).toMatchObject({ id: env.id });
    expect(await references.findEnvironment(theirs.caller, env.id)).toBeNull();
    expect(await references.findEnvironment(ours.caller, 'not-an-environment-id')).toBeNull();
  });

  it("finds a run of the team with its ancestors, and no other team's", async () => {
    const [ours, theirs] = [await newTeam(), await newTeam()];
    const root = await newRun(ours.teamId);
    const child = await newRun(ours.teamId, [root.id]);
    expect(await references.findRun(ours.teamId, child.id)).toEqual({ id: child.id, ancestorIds: [root.id] });
    expect(await references.findRun(theirs.teamId, child.id)).toBeNull();
  });

  it("knows the team's conversations and no other team's", async () => {
    const [ours, theirs] = [await newTeam(), await newTeam()];
    const run = await newRun(ours.teamId);
    expect(await references.conversationExists(ours.teamId, run.conversationId)).toBe(true);
    expect(await references.conversationExists(theirs.teamId, run.conversationId)).toBe(false);
    expect(await references.conversationExists(ours.teamId, newUuid())).toBe(false);
  });

  it('finds a member by user ID or by email in any case, in the team only', async () => {
    const [ours, theirs] = [await newTeam(), await newTeam()];
    const { id, email } = ours.user;
    expect(await references.findMemberId(ours.teamId, id)).toBe(id);
    expect(await references.findMemberId(ours.teamId, email.toLowerCase())).toBe(id);
    expect(await references.findMemberId(ours.teamId, email.toUpperCase())).toBe(id);
    expect(await references.findMemberId(theirs.teamId, id)).toBeNull();
    expect(await references.findMemberId(theirs.teamId, email)).toBeNull();
  });
});
