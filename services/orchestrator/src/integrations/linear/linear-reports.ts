import { AppError } from '@conveyor/errors';
import type { PrismaClient } from '@conveyor/db';
import type { Logger } from '@conveyor/logger';
import { TERMINAL_STATES } from '@conveyor/run-events';
import { sessionLinkOf } from '../../events/event-body';
import {
  commentCreate,
  issueUpdate,
  LinearCredentialsRefused,
  type LinearApi,
} from '../../linear/linear-graphql';
import type { SecretCipher } from '../../secrets/secret-cipher';
import { ReportQueue, type QueuedReport, type ReportQueueShape, type Sent } from '../report-queue';
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

type Claimed = QueuedReport & { kind: Kind; data: ReportData };

/** The queue of Linear reports (settled ones stay, with their status). */
const QUEUE: ReportQueueShape = {
  name: 'linear reporter',
  table: 'LinearReport',
  ownerColumn: 'integrationId',
  columns: ['kind', 'data'],
  keepSettled: true,
  batch: 20,
  concurrency: 20,
  leaseMs: 120_000,
};

/**
 * What a Linear integration's run owes its issue: a comment with the pull request when the run opens one, a comment
 * with the outcome and the session link when it ends, each followed by the state move the integration asks for.
 * Written as rows (LinearReport: the end by a trigger on the run's state change, in the completion's transaction;
 * the pull request when the runner pushed), then sent through the integrations' report queue (report-queue.ts), so a
 * Linear outage, a 5xx or an orchestrator restart delays a report rather than losing it. Linear refusing the key
 * marks the integration broken and fails its reports at once: nothing retries a key that cannot work.
 */
export class LinearReporter {
  readonly queue: ReportQueue<{ kind: Kind; data: ReportData }>;

  constructor(private readonly deps: LinearReportDeps) {
    this.queue = new ReportQueue(QUEUE, {
      ...deps,
      send: (report, log) => this.send(report, log),
      markBroken: (id, reason) => markLinearIntegrationBroken(deps.db, id, reason),
    });
  }

  /** The run opened a pull request: its issue hears of it (once per pull request). */
  async pullRequestOpened(runId: string, url: string): Promise<void> {
    const run = await this.deps.db.run.findUnique({
      where: { id: runId },
      select: { source: true, teamId: true, metadata: true },
    });
    const integrationId = (run?.metadata as Record<string, unknown> | null)?.linear_integration_id;
    // Only runs the integration's own webhook started (the source is the platform's, not the caller's metadata).
    if (!run || run.source !== 'LINEAR' || typeof integrationId !== 'string') return;
    const integration = await this.deps.db.linearIntegration.findFirst({
      where: { id: integrationId, teamId: run.teamId },
      select: { id: true },
    });
    if (!integration) return;
    await this.deps.db.linearReport.createMany({
      data: [
        {
          integrationId,
          runId,
          kind: 'pull_request',
          dedupeKey: `${runId}:pull_request:${url}`,
          data: { url },
        },
      ],
      skipDuplicates: true,
    });
    void this.queue.kick();
  }

  private async send(report: Claimed, log: Logger): Promise<Sent> {
    const { db } = this.deps;
    const integration = await db.linearIntegration.findUnique({ where: { id: report.owner } });
    if (!integration) return { kind: 'dropped', reason: 'the integration is gone' };
    if (integration.status !== 'active')
      return { kind: 'dropped', reason: `the integration is broken: ${integration.brokenReason ?? ''}` };
    const run = await db.run.findUnique({
      where: { id: report.runId },
      include: { artifacts: { where: { type: 'PULL_REQUEST' }, orderBy: { createdAt: 'asc' } } },
    });
    if (!run) return { kind: 'dropped', reason: 'the run is gone' };
    // An execution that ended in ERROR and was queued again has not ended: its next execution's end reports.
    if (report.kind === 'run_ended' && !TERMINAL_STATES.has(run.state))
      return { kind: 'dropped', reason: 'the run was queued again' };
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
      log.info({ kind: report.kind }, 'reported on the Linear issue');
      return { kind: 'done' };
    } catch (err) {
      if (err instanceof LinearCredentialsRefused) return { kind: 'refused', reason: err.linearReason };
      if (!(err instanceof AppError)) throw err;
      // A refusal of the operation itself (invalid_request) is not retried; an outage is, on the schedule.
      return err.code === 'resource_unavailable'
        ? { kind: 'retry', reason: err.message }
        : { kind: 'dropped', reason: err.message };
    }
  }
}
