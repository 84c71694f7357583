import { createPrismaClient, newId, newUuid, type PrismaClient } from '@conveyor/db';
import { createLogger } from '@conveyor/logger';
import { createTestDatabase, uniqueName, type TestDatabase } from '@conveyor/testing';
import { createTeam, createUser } from '../auth/team-admin';
import { completeRun } from '../runner/complete-run';
import { succeeded } from '../test-support/run-scene';
import { ReportQueue, type Sent } from './report-queue';

const logger = createLogger({ service: 'test', level: 'silent' });

/**
 * The integrations' report rows over real PostgreSQL: written in the transaction of the state change they report (a
 * completion that committed owes its reports even if the orchestrator stops right after), and sent by the report
 * queue in each run's order, retried, and taken over from an orchestrator that stopped mid-send.
 */
describe('integration reports', () => {
  let database: TestDatabase;
  let db: PrismaClient;
  let teamId: string;
  let userId: string;
  let githubAppId: string;
  let linearIntegrationId: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    db = createPrismaClient(database.url);
    teamId = (await createTeam(db, 'Reports')).id;
    userId = (await createUser(db, { teamId, email: `${uniqueName('u')}@x.dev` })).id;
    const factory = await db.factory.create({ data: { id: newId('fac'), teamId, name: 'f' } });
    const webhook = (name: string) =>
      db.webhook.create({ data: { id: newId('wh'), teamId, factoryId: factory.id, name, secretName: 's' } });
    const key = { privateKeyCiphertext: Buffer.from('x'), privateKeyKeyId: 'k' };
    githubAppId = (
      await db.gitHubApp.create({
        data: {
          id: newId('gha'),
          teamId,
          name: 'app',
          appId: '1',
          slug: 'app',
          botLogin: 'app[bot]',
          webhookId: (await webhook('github')).id,
          ...key,
        },
      })
    ).id;
    linearIntegrationId = (
      await db.linearIntegration.create({
        data: {
          id: newId('lin'),
          teamId,
          name: 'linear',
          apiKeyCiphertext: Buffer.from('x'),
          apiKeyKeyId: 'k',
          agentUserId: 'agent',
          agentName: 'Agent',
          webhookId: (await webhook('linear')).id,
        },
      })
    ).id;
  });

  afterAll(async () => {
    await db.$disconnect();
    await database.drop();
  });

  /** A run a runner holds (execution 1), started by `source` with `metadata`. */
  const heldRun = async (source: string, metadata: Record<string, string>) => {
    const id = newUuid();
    await db.run.create({
      data: {
        id,
        teamId,
        title: 't',
        prompt: 'p',
        creatorId: userId,
        executorId: userId,
        conversationId: newUuid(),
        sessionId: newUuid(),
        state: 'INPROGRESS',
        runnerId: 'runner-1',
        source,
        metadata,
      },
    });
    return id;
  };
  const complete = (runId: string) =>
    completeRun(
      { db, debugWindowMinutes: 0, saveTranscript: async () => undefined },
      succeeded({ run_id: runId, execution: 1, runner_id: 'runner-1' }),
    );

  it("writes a Linear run's end report in the completion's own transaction, once however often it is answered", async () => {
    const runId = await heldRun('LINEAR', { linear_integration_id: linearIntegrationId });
    await complete(runId);
    // Nothing ran after the completion committed (an orchestrator stopped here): the report is owed all the same.
    const owed = await db.linearReport.findMany({ where: { runId } });
    expect(owed).toEqual([
      expect.objectContaining({ kind: 'run_ended', status: 'pending', integrationId: linearIntegrationId }),
    ]);
    // The runner sending the completion again (its answer was lost) writes nothing more.
    expect((await complete(runId)).replayed).toBe(true);
    expect(await db.linearReport.count({ where: { runId } })).toBe(1);
  });

  it('writes nothing for a run whose metadata names an integration it was not started by', async () => {
    // A caller of the API chooses a run's metadata, the App's webhook UID included; only the source is the platform's.
    const app = await db.gitHubApp.findUniqueOrThrow({ where: { id: githubAppId } });
    const runId = await heldRun('API', {
      linear_integration_id: linearIntegrationId,
      github_app_id: app.id,
      webhook_uid: app.webhookId,
    });
    await complete(runId);
    expect(await db.linearReport.count({ where: { runId } })).toBe(0);
    expect(await db.gitHubAppReport.count({ where: { runId } })).toBe(0);
  });

  it("writes a GitHub App run's check completion and answer with its completion", async () => {
    const app = await db.gitHubApp.findUniqueOrThrow({ where: { id: githubAppId } });
    const runId = await heldRun('GITHUB_WEBHOOK', { github_app_id: app.id, webhook_uid: app.webhookId });
    await complete(runId);
    const owed = await db.gitHubAppReport.findMany({ where: { runId }, orderBy: { id: 'asc' } });
    expect(owed.map((r) => [r.kind, r.data])).toEqual([
      ['completed', { state: 'SUCCEEDED' }],
      ['answer', { execution: 1 }],
    ]);
  });

  describe('the queue', () => {
    let runId: string;
    const sent: string[] = [];
    let answers: Array<Sent | 'hang'> = [];
    const queue = (name: string) =>
      new ReportQueue<{ kind: string }>(
        {
          name,
          table: 'GitHubAppReport',
          ownerColumn: 'githubAppId',
          columns: ['kind'],
          keepSettled: false,
          batch: 10,
          concurrency: 2,
          leaseMs: 60_000,
        },
        {
          schedule: [0, 0, 0],
          intervalMs: 60_000,
          db,
          logger,
          send: async (report) => {
            const answer = answers.shift() ?? { kind: 'done' };
            if (answer === 'hang') return new Promise<Sent>(() => undefined);
            sent.push(`${report.kind}:${answer.kind}`);
            return answer;
          },
          markBroken: async (id, reason) => {
            await db.gitHubApp.update({ where: { id }, data: { status: 'broken', brokenReason: reason } });
          },
        },
      );

    beforeEach(async () => {
      sent.length = 0;
      answers = [];
      await db.gitHubAppReport.deleteMany({});
      runId = newUuid();
      await db.gitHubAppReport.createMany({
        data: ['queued', 'started', 'completed'].map((kind) => ({ githubAppId, runId, kind })),
      });
    });

    it("sends a run's reports in order, the next only once the one before it went (retries included)", async () => {
      answers = [
        { kind: 'retry', reason: '503' },
        { kind: 'retry', reason: '503' },
      ];
      await queue('a').drain();
      expect(sent).toEqual(['queued:retry', 'queued:retry', 'queued:done', 'started:done', 'completed:done']);
      expect(await db.gitHubAppReport.count()).toBe(0);
    });

    it('drops a report once its retries are spent, and moves on to the next', async () => {
      answers = [0, 1, 2].map(() => ({ kind: 'retry', reason: '503' }) as const);
      await queue('a').drain();
      expect(sent).toEqual([
        'queued:retry',
        'queued:retry',
        'queued:retry',
        'started:done',
        'completed:done',
      ]);
    });

    it("leaves a claimed report to its claimer's lease, then another orchestrator takes it over", async () => {
      answers = ['hang'];
      const stopped = queue('stopped');
      // The first orchestrator claims the run's first report and stops mid-send.
      void stopped.drain();
      const claimed = await waitForClaim(db, runId);
      expect(claimed.kind).toBe('queued');
      // Another one finds nothing due: the claim holds, and the run's later reports wait behind it.
      await queue('other').drain();
      expect(sent).toEqual([]);
      // The lease ends (as it would after LEASE_MS): the other takes over, in order.
      await db.gitHubAppReport.updateMany({ where: { id: claimed.id }, data: { nextAttemptAt: new Date() } });
      await queue('other').drain();
      expect(sent).toEqual(['queued:done', 'started:done', 'completed:done']);
    });

    it('marks the integration broken when the provider refuses its credentials', async () => {
      answers = [{ kind: 'refused', reason: 'Integration not found' }];
      await queue('a').drain();
      expect(await db.gitHubApp.findUniqueOrThrow({ where: { id: githubAppId } })).toMatchObject({
        status: 'broken',
        brokenReason: 'Integration not found',
      });
      await db.gitHubApp.update({
        where: { id: githubAppId },
        data: { status: 'active', brokenReason: null },
      });
    });
  });
});

/** The run's first report once a queue claimed it (its next attempt pushed past the lease). */
async function waitForClaim(db: PrismaClient, runId: string) {
  for (;;) {
    const [first] = await db.gitHubAppReport.findMany({ where: { runId }, orderBy: { id: 'asc' } });
    if (first && first.nextAttemptAt.getTime() > Date.now() + 30_000) return first;
    await new Promise((resolve) => setImmediate(resolve));
  }
}
