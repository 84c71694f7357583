import { createBlobStore, type BlobStore } from '@conveyor/blob-store';
import { createPrismaClient, newUuid, type PrismaClient, type RunState } from '@conveyor/db';
import { createLogger } from '@conveyor/logger';
import { createMetricsRegistry, createRetentionDeletedCounter } from '@conveyor/metrics';
import { createTestDatabase, type TestDatabase } from '@conveyor/testing';
import { harnessSessionKey } from '../runner/harness-sessions';
import { executionTranscriptKey } from '../runs/transcript';
import { RunRetention } from './run-retention';
import { setTeamRunRetention } from './team-run-retention';

const DAY = 24 * 60 * 60 * 1000;
const now = new Date('2026-11-27T12:00:00Z');
const daysAgo = (days: number) => new Date(now.getTime() - days * DAY);

describe('run retention', () => {
  let db: TestDatabase;
  let prisma: PrismaClient;
  let blobs: BlobStore;

  async function run(
    teamId: string,
    state: RunState,
    updatedAt: Date,
    extra: { execution?: number; debugExecution?: number } = {},
  ): Promise<string> {
    const id = newUuid();
    await prisma.run.create({
      data: {
        id,
        teamId,
        title: `${state} run`,
        prompt: 'p',
        state,
        creatorId: 'u',
        executorId: 'u',
        conversationId: newUuid(),
        sessionId: newUuid(),
        createdAt: updatedAt,
        updatedAt,
        ...extra,
      },
    });
    return id;
  }

  const exists = async (id: string) => (await prisma.run.count({ where: { id } })) === 1;

  beforeAll(async () => {
    db = await createTestDatabase();
    prisma = createPrismaClient(db.url);
    blobs = createBlobStore(prisma);
    for (const id of ['team_kept7', 'team_default']) await prisma.team.create({ data: { id, name: id } });
    await setTeamRunRetention(prisma, 'team_kept7', 7);
  });

  afterAll(async () => {
    await prisma.$disconnect();
    await db.drop();
  });

  it('deletes finished runs past their team’s retention with their artifacts and blobs, in batches, never one in flight', async () => {
    const registry = createMetricsRegistry('orchestrator');
    const retention = new RunRetention(
      {
        db: prisma,
        blobs,
        logger: createLogger({ service: 'test', level: 'silent' }),
        deleted: createRetentionDeletedCounter(registry),
      },
      { defaultDays: 0, batchSize: 2, intervalMs: 60_000 },
    );

    // An expired run with everything a run leaves behind: two executions' transcripts, the harness session, an
    // artifact's bytes and a handoff file.
    const full = await run('team_kept7', 'SUCCEEDED', daysAgo(10), { execution: 2 });
    const artifactKey = `artifacts/${full}/a1`;
    const handoffKey = `handoff/${full}/1/h1`;
    const keys = [
      executionTranscriptKey(full, 1),
      executionTranscriptKey(full, 2),
      harnessSessionKey(full),
      artifactKey,
      handoffKey,
    ];
    for (const key of keys) await blobs.put(key, Buffer.from(`bytes of ${key}`), 'text/plain');
    await prisma.artifact.create({
      data: { id: newUuid(), runId: full, type: 'FILE', blobKey: artifactKey },
    });
    await prisma.artifact.create({ data: { id: newUuid(), runId: full, type: 'PULL_REQUEST' } });
    await prisma.runHandoffAttachment.create({
      data: { id: newUuid(), runId: full, execution: 1, fileName: 'h1', sizeBytes: 1, blobKey: handoffKey },
    });
    const expired = [
      full,
      await run('team_kept7', 'FAILED', daysAgo(8)),
      await run('team_kept7', 'CANCELLED', daysAgo(30)),
    ];
    // Kept: in flight however old, a debug agent in a failed run's session, younger than 7 days, a team without
    // retention (the installation default is off).
    const kept = [
      await run('team_kept7', 'INPROGRESS', daysAgo(60)),
      await run('team_kept7', 'QUEUED', daysAgo(60)),
      await run('team_kept7', 'CLAIMED', daysAgo(60)),
      await run('team_kept7', 'FAILED', daysAgo(60), { debugExecution: 1 }),
      await run('team_kept7', 'SUCCEEDED', daysAgo(6)),
      await run('team_default', 'SUCCEEDED', daysAgo(400)),
    ];
    const keptTranscript = executionTranscriptKey(kept[0]!, 1);
    await blobs.put(keptTranscript, Buffer.from('live'), 'text/plain');

    expect(await retention.runOnce(now)).toEqual({ runs: 3, artifacts: 2, blobs: expect.any(Number) });
    for (const id of expired) expect(await exists(id)).toBe(false);
    for (const id of kept) expect(await exists(id)).toBe(true);
    for (const key of keys) expect(await blobs.get(key)).toBeUndefined();
    expect(await blobs.get(keptTranscript)).toBeDefined();
    expect(await prisma.artifact.count({ where: { runId: full } })).toBe(0);

    const metrics = await registry.metrics();
    expect(metrics).toMatch(/conveyor_retention_deleted_total\{kind="runs",service="orchestrator"\} 3\n/);
    expect(metrics).toMatch(
      /conveyor_retention_deleted_total\{kind="artifacts",service="orchestrator"\} 2\n/,
    );
    expect(metrics).toMatch(
      /conveyor_retention_deleted_total\{kind="blob_failures",service="orchestrator"\} 0\n/,
    );

    // A second pass finds nothing more.
    expect(await retention.runOnce(now)).toEqual({ runs: 0, artifacts: 0, blobs: 0 });
  });

  it('applies the installation default to teams without their own, and a team’s 0 keeps its runs forever', async () => {
    const retention = new RunRetention(
      {
        db: prisma,
        blobs,
        logger: createLogger({ service: 'test', level: 'silent' }),
        deleted: createRetentionDeletedCounter(createMetricsRegistry('orchestrator')),
      },
      { defaultDays: 365, batchSize: 500, intervalMs: 60_000 },
    );
    await setTeamRunRetention(prisma, 'team_kept7', 0);
    const forever = await run('team_kept7', 'SUCCEEDED', daysAgo(4000));
    const byDefault = await run('team_default', 'SUCCEEDED', daysAgo(366));
    const young = await run('team_default', 'SUCCEEDED', daysAgo(364));
    await retention.runOnce(now);
    expect(await exists(forever)).toBe(true);
    expect(await exists(byDefault)).toBe(false);
    expect(await exists(young)).toBe(true);
  });
});
