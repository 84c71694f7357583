import { createPrismaClient, type PrismaClient } from '@conveyor/db';
import { runCli, startPlatform, type RunningPlatform } from './platform';
import { apiCall, waitForRunState } from './run-waits';

const DAY = 24 * 60 * 60 * 1000;

/**
 * Run retention in the running orchestrator (docs/operations.md "Retention"): a team's retention set with the CLI,
 * a finished run past it disappears from the API with its transcript, a run in flight as old stays, and /metrics
 * counts the deletion.
 */
describe('run retention on a running platform', () => {
  let platform: RunningPlatform;
  let db: PrismaClient;

  beforeAll(async () => {
    platform = await startPlatform({ env: { RUN_RETENTION_INTERVAL_MS: '1000' } });
    db = createPrismaClient(platform.databaseUrl);
  });

  afterAll(async () => {
    await db?.$disconnect();
    await platform?.stop();
  });

  const metric = async (kind: string): Promise<number> => {
    const text = await (await fetch(`${platform.orchestratorHttpUrl}/metrics`)).text();
    const line = text
      .split('\n')
      .find((l) => l.startsWith(`conveyor_retention_deleted_total{kind="${kind}"`));
    return Number(line?.split(' ').pop());
  };

  const transcriptStatus = async (runId: string): Promise<number> =>
    (
      await fetch(`${platform.apiUrl}/agent/runs/${runId}/transcript`, {
        headers: { Authorization: `Bearer ${platform.apiKey}` },
        redirect: 'manual',
      })
    ).status;

  it('deletes a finished run past its team’s retention with its transcript, never one in flight', async () => {
    const finished = (
      await apiCall(platform, 'POST', '/agent/runs', { prompt: '@demo message soon expired' })
    ).body.run_id as string;
    await waitForRunState(platform, finished, ['SUCCEEDED']);
    const live = (await apiCall(platform, 'POST', '/agent/runs', { prompt: '@demo sleep 60000' })).body
      .run_id as string;
    await waitForRunState(platform, live, ['INPROGRESS']);
    expect(await transcriptStatus(finished)).toBe(302);
    expect(await metric('runs')).toBe(0);

    // Both were last updated 31 days ago; the team keeps runs 30 days.
    const { teamId } = await db.run.findUniqueOrThrow({ where: { id: finished }, select: { teamId: true } });
    await runCli(['team', 'set-retention', '--team', teamId, '--days', '30'], platform.env);
    await db.run.updateMany({
      where: { id: { in: [finished, live] } },
      data: { updatedAt: new Date(Date.now() - 31 * DAY) },
    });

    const deadline = Date.now() + 30_000;
    while ((await apiCall(platform, 'GET', `/agent/runs/${finished}`)).status !== 404) {
      if (Date.now() > deadline) throw new Error(`run not deleted\n${platform.logs().slice(-3000)}`);
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(await transcriptStatus(finished)).toBe(404);
    expect(await db.storedBlob.count({ where: { key: { startsWith: `transcripts/${finished}/` } } })).toBe(0);
    expect(await metric('runs')).toBe(1);
    expect((await apiCall(platform, 'GET', `/agent/runs/${live}`)).body).toMatchObject({
      state: 'INPROGRESS',
    });
  }, 120_000);
});
