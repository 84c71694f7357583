import { createPrismaClient, type DbClient } from './client';
import { RunState } from './generated/prisma/client';
import { newId, newUuid } from './ids';
import { migrate } from './migrator';
import { createScratchDatabase, type ScratchDatabase } from './test-support/scratch-database';

describe('createPrismaClient', () => {
  let db: ScratchDatabase;
  let prisma: DbClient;

  beforeAll(async () => {
    db = await createScratchDatabase('client');
    await migrate(db.url);
    prisma = createPrismaClient(db.url);
  });

  afterAll(async () => {
    await prisma?.$disconnect();
    await db?.drop();
  });

  it('reads and writes through the pg adapter, with schema defaults applied by the database', async () => {
    const team = await prisma.team.create({ data: { id: newId('team'), name: 'Acme' } });
    expect(team).toMatchObject({ metadataFilteringEnabled: true, agentIdentityLimit: 10 });

    const run = await prisma.run.create({
      data: {
        id: newUuid(),
        teamId: team.id,
        title: 't',
        prompt: 'p',
        creatorId: 'u',
        executorId: 'u',
        conversationId: newUuid(),
        sessionId: newUuid(),
        metadata: { repo: 'x' },
      },
    });
    expect(run).toMatchObject({ state: RunState.QUEUED, harness: 'demo', ancestorIds: [] });

    const found = await prisma.run.findMany({
      where: { teamId: team.id, metadata: { equals: { repo: 'x' } } },
    });
    expect(found.map((r) => r.id)).toEqual([run.id]);

    const event = await prisma.runEvent.create({ data: { runId: run.id, kind: 'state' } });
    expect(typeof event.id).toBe('bigint');
  });

  it('deletes run-scoped API keys with their run', async () => {
    const team = await prisma.team.create({ data: { id: newId('team'), name: 'Keys' } });
    const run = await prisma.run.create({
      data: {
        id: newUuid(),
        teamId: team.id,
        title: 't',
        prompt: 'p',
        creatorId: 'u',
        executorId: 'u',
        conversationId: newUuid(),
        sessionId: newUuid(),
      },
    });
    const key = await prisma.apiKey.create({
      data: {
        id: newId('key'),
        teamId: team.id,
        runId: run.id,
        name: 'harness',
        prefix: newId('pfx'),
        secretHash: 'h',
      },
    });
    await prisma.run.delete({ where: { id: run.id } });
    expect(await prisma.apiKey.findUnique({ where: { id: key.id } })).toBeNull();
  });
});
