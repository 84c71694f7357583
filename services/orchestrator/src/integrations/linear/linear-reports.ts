import { AppError } from '@conveyor/errors';
import type { Prisma, PrismaClient } from '@conveyor/db';
import type { Logger } from '@conveyor/logger';
import { TERMINAL_STATES } from '@conveyor/run-events';
import { BackgroundLoop } from '@conveyor/runtime';
import { sessionLinkOf } from '../../events/event-body';
import { nextAttemptDelay } from '../../events/retry-schedule';
import {
  commentCreate,
  issueUpdate,
  LinearCredentialsRefused,
  type LinearApi,
} from '../../linear/linear-graphql';
import type { SecretCipher } from '../../secrets/secret-cipher';
import { linearKey, markLinearIntegrationBroken } from './linear-integrations';

export interface LinearReportDeps {
  db: PrismaClient;
  cipher: SecretCipher;
  linear: LinearApi;
  logger: Logger;
  publicApiBaseUrl: string;
  /** LINEAR_REPORT_RETRY_SCHEDULE_MS. */
  schedule: readonly number[];
  intervalMs: number;
}

type Kind = 'pull_request' | 'run_ended';
/** A report's progress: its comment is posted once, even when the state move after it is retried. */
type ReportData = { url?: string; commented?: boolean };

interface Claimed {
  id: bigint;
  integrationId: string;
  runId: string;
  kind: Kind;
  data: ReportData;
  attempts: number;
}

/** Reports claimed per pass. */
const BATCH = 20;

/**
 * What a Linear integration's run owes its issue: a comment with the pull request when the run opens one, a comment
 * with the outcome and the session link when it ends, each followed by the state move the integration asks for.
 * Written as rows (LinearReport) when the run reports, then sent by a loop with retries, so a Linear outage, a 5xx or
 * an orchestrator restart delays a report rather than losing it. A pass claims due reports with a lease (SKIP LOCKED:
 * replicas share the work; a crashed claim comes due again); a run's reports go in order. Linear refusing the key
 * marks the integration broken and fails its reports at once: nothing retries a key that cannot work.
 */
export class LinearReporter {
  readonly loop: BackgroundLoop;

  constructor(private readonly deps: LinearReportDeps) {
    this.loop = new BackgroundLoop({
      name: 'linear reporter',
      dependency: 'postgres',
      intervalMs: deps.intervalMs,
      run: () => this.sendDue(),
      logger: deps.logger,
    });
  }

  start(): void {
    this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** The run opened a pull request: its issue hears of it (once per pull request). */
  pullRequestOpened(runId: string, url: string): Promise<void> {
    return this.record(runId, 'pull_request', `${runId}:pull_request:${url}`, { url });
  }

  /** An execution of the run ended: its issue hears the outcome (once per execution; a run retried is not ended). */
  runEnded(runId: string, execution: number): Promise<void> {
    return this.record(runId, 'run_ended', `${runId}:run_ended:${execution}`, {});
  }

  private async record(runId: string, kind: Kind, dedupeKey: string, data: ReportData): Promise<void> {
    const run = await this.deps.db.run.findUnique({
      where: { id: runId },
      select: { source: true, state: true, teamId: true, metadata: true },
    });
    const integrationId = (run?.metadata as Record<string, unknown> | null)?.linear_integration_id;
    // Only runs the integration's own webhook started (the source is the platform's, not the caller's metadata).
    if (!run || run.source !== 'LINEAR' || typeof integrationId !== 'string') return;
    if (kind === 'run_ended' && !TERMINAL_STATES.has(run.state)) return;
    const integration = await this.deps.db.linearIntegration.findFirst({
      where: { id: integrationId, teamId: run.teamId },
      select: { id: true },
    });
    if (!integration) return;
    await this.deps.db.linearReport.createMany({
      data: [{ integrationId, runId, kind, dedupeKey, data }],
      skipDuplicates: true,
    });
    void this.loop.trigger();
  }

  /** One pass: claims the due reports and sends each. */
  async sendDue(): Promise<void> {
    const claimed = await this.deps.db.$queryRaw<Claimed[]>`
      UPDATE "LinearReport" r SET "nextAttemptAt" = now() + interval '2 minutes'
       WHERE r.id IN (
         SELECT c.id FROM "LinearReport" c
          WHERE c.status = 'pending' AND c."nextAttemptAt" <= now()
            AND NOT EXISTS (SELECT 1 FROM "LinearReport" p
                             WHERE p."runId" = c."runId" AND p.status = 'pending' AND p.id < c.id)
          ORDER BY c.id LIMIT ${BATCH} FOR UPDATE SKIP LOCKED)
      RETURNING r.id, r."integrationId", r."runId", r.kind, r.data, r.attempts`;
    await Promise.all(claimed.map((report) => this.send(report)));
  }

  private async send(report: Claimed): Promise<void> {
    const { db, logger } = this.deps;
    const log = logger.child({
      runId: report.runId,
      linearIntegrationId: report.integrationId,
      kind: report.kind,
    });
    const integration = await db.linearIntegration.findUnique({ where: { id: report.integrationId } });
    if (!integration) return;
    if (integration.status !== 'active')
      return this.finish(report, 'failed', `the integration is broken: ${integration.brokenReason ?? ''}`);
    const run = await db.run.findUnique({
      where: { id: report.runId },
      include: { artifacts: { where: { type: 'PULL_REQUEST' }, orderBy: { createdAt: 'asc' } } },
    });
    if (!run) return this.finish(report, 'failed', 'the run is gone');
    const metadata = (run.metadata ?? {}) as Record<string, unknown>;
    const issueId = String(metadata.linear_issue_id ?? '');
    const session = `Session: ${sessionLinkOf(this.deps.publicApiBaseUrl, run.id)}`;
    const [body, stateId] =
      report.kind === 'pull_request'
        ? [
            `Conveyor opened a pull request: ${report.data.url ?? ''}\n\n${session}`,
            integration.prOpenedStateId,
          ]
        : [
            [
              `Conveyor run **${run.title}** ended **${run.state}**${run.statusMessage ? `: ${run.statusMessage}` : ''}`,
              ...run.artifacts.map((a) => `Pull request: ${String((a.data as { url?: unknown }).url)}`),
              session,
            ].join('\n\n'),
            integration.runEndedStateId,
          ];
    try {
      const key = linearKey(this.deps.cipher, integration);
      if (!report.data.commented) {
        await commentCreate(this.deps.linear, key, issueId, body);
        report.data = { ...report.data, commented: true };
        await db.linearReport.update({ where: { id: report.id }, data: { data: report.data } });
      }
      if (stateId) await issueUpdate(this.deps.linear, key, issueId, stateId);
      log.info('reported on the Linear issue');
      await this.finish(report, 'done', null);
    } catch (err) {
      if (err instanceof LinearCredentialsRefused) {
        await markLinearIntegrationBroken(db, integration.id, err.linearReason);
        log.warn({ linear: err.linearReason }, "Linear refused the integration's key; marked broken");
        return this.finish(report, 'failed', err.message);
      }
      if (!(err instanceof AppError)) throw err;
      await this.retry(report, err, log);
    }
  }

  /** A refusal of the operation itself (invalid_request) is not retried; an outage is, on the schedule. */
  private async retry(report: Claimed, err: AppError, log: Logger): Promise<void> {
    const attempts = report.attempts + 1;
    const delay =
      err.code === 'resource_unavailable'
        ? nextAttemptDelay(this.deps.schedule, attempts, undefined)
        : undefined;
    if (delay === undefined) {
      log.warn({ err: err.message, attempts }, 'Linear report failed');
      return this.finish(report, 'failed', err.message);
    }
    log.info({ err: err.message, attempts, retryInMs: delay }, 'Linear report will be retried');
    await this.deps.db.linearReport.update({
      where: { id: report.id },
      data: { attempts, lastError: err.message.slice(0, 500), nextAttemptAt: new Date(Date.now() + delay) },
    });
  }

  private async finish(report: Claimed, status: 'done' | 'failed', error: string | null): Promise<void> {
    await this.deps.db.linearReport.update({
      where: { id: report.id },
      data: {
        status,
        attempts: report.attempts + 1,
        lastError: error?.slice(0, 500) ?? null,
      } satisfies Prisma.LinearReportUpdateInput,
    });
  }
}
