import { AppError } from '@conveyor/errors';
import type { PrismaClient } from '@conveyor/db';
import type { Logger } from '@conveyor/logger';
import { TERMINAL_STATES } from '@conveyor/run-events';
import { sessionLinkOf } from '../events/event-body';
import { runOutcomeLines } from '../events/run-outcome-text';
import { AppCredentialsRefused } from '../github/github-app-auth';
import { githubMessage, githubRequest, type GitHubApi, type GitHubResponse } from '../github/github-rest';
import { appTokenForRun, type GitHubAppTokenDeps } from './github-app-tokens';
import { markGitHubAppBroken } from './github-apps';
import { ReportQueue, type QueuedReport, type ReportQueueShape, type Sent } from './report-queue';

export interface GitHubAppReportDeps {
  db: PrismaClient;
  github: GitHubApi;
  appTokens: GitHubAppTokenDeps;
  publicApiBaseUrl: string;
  logger: Logger;
  /** GITHUB_APP_REPORT_RETRY_SCHEDULE_MS. */
  schedule: readonly number[];
  intervalMs: number;
}

/** The check's name on GitHub. */
const CHECK_NAME = 'Conveyor';
/** The run's check runs on GitHub, in its metadata: comma-separated IDs (one per commit the execution touched). */
const CHECKS_KEY = 'github_check_runs';

type Kind = 'queued' | 'started' | 'pushed' | 'completed' | 'answer';
/** `sha`: the commit of a new check; `state`: the outcome reported; `moved`: the checks already updated. */
type ReportData = { sha?: string; state?: string; moved?: string[] };
type Report = QueuedReport & { kind: Kind; data: ReportData };
type AppRun = { id: string; teamId: string; source: string; state: string; title: string; metadata: unknown };
type Call = (method: 'GET' | 'POST' | 'PATCH', path: string, body?: unknown) => Promise<GitHubResponse>;

/** The queue of GitHub App reports. */
const QUEUE: ReportQueueShape = {
  name: 'github app reports',
  table: 'GitHubAppReport',
  ownerColumn: 'githubAppId',
  columns: ['kind', 'data'],
  keepSettled: false,
  batch: 50,
  concurrency: 4,
  leaseMs: 60_000,
};

/** What GitHub's answer comes to: taken, to retry (an outage, a rate limit), or refused for good. */
class GitHubRefused extends Error {
  constructor(
    readonly res: GitHubResponse,
    readonly transient = res.status >= 500 || res.status === 429,
  ) {
    super(`GitHub answered ${res.status}: ${githubMessage(res)}`);
  }
}

const expect2xx = (res: GitHubResponse): GitHubResponse => {
  if (res.status < 200 || res.status > 299) throw new GitHubRefused(res);
  return res;
};

/**
 * What a GitHub App's run owes GitHub (docs/integrations.md "Progress"): a check run queued when the run is (on the
 * pull request's head for a review, else the default branch's head), moved to in progress when a runner claims it,
 * one more on each commit it pushes, all completed with the outcome and the session link when it ends, then the
 * answer where it was asked (a reply in a review comment's thread, else a comment on the issue or pull request).
 * The `GitHubAppReport` rows are written by a trigger with the state change they report (the push's by `pushed`) and
 * sent through the integrations' report queue (report-queue.ts): in order per run, retried through a GitHub outage
 * and across restarts; GitHub refusing the App's credentials marks it broken and its reports are dropped.
 */
export class GitHubAppReports {
  readonly queue: ReportQueue<{ kind: Kind; data: ReportData }>;

  constructor(private readonly deps: GitHubAppReportDeps) {
    this.queue = new ReportQueue(QUEUE, {
      ...deps,
      send: (report, log) => this.send(report, log),
      markBroken: (id, reason) => markGitHubAppBroken(deps.db, id, reason),
    });
  }

  /** The commit an execution pushed gets its own check (a pull request shows its head commit's checks). */
  async pushed(runId: string, commit: string): Promise<void> {
    const inserted = await this.deps.db.$executeRaw`
      INSERT INTO "GitHubAppReport" ("githubAppId", "runId", kind, data)
      SELECT app, ${runId}::uuid, 'pushed', jsonb_build_object('sha', ${commit}::text)
        FROM "github_app_of_run"(${runId}::uuid) app
       WHERE app IS NOT NULL`;
    if (inserted > 0) void this.queue.kick();
  }

  private async send(report: Report, log: Logger): Promise<Sent> {
    const { db } = this.deps;
    const run = await db.run.findUnique({
      where: { id: report.runId },
      select: { id: true, teamId: true, source: true, state: true, title: true, metadata: true },
    });
    if (!run) return { kind: 'dropped', reason: 'the run is gone' };
    // A run that ended in ERROR and was queued again answers when its next execution ends.
    if (report.kind === 'answer' && !TERMINAL_STATES.has(run.state))
      return { kind: 'dropped', reason: 'the run was queued again' };
    const repository = String((run.metadata as Record<string, unknown>).github_repository);
    try {
      const token = await appTokenForRun(this.deps.appTokens, run, repository);
      const [owner, repo] = repository.split('/').map(encodeURIComponent) as [string, string];
      const call: Call = async (method, path, body) =>
        expect2xx(
          await githubRequest(this.deps.github, token, method, `/repos/${owner}/${repo}${path}`, body),
        );
      await this.report(report, run, call);
      log.debug({ kind: report.kind }, 'reported to GitHub');
      return { kind: 'done' };
    } catch (err) {
      if (err instanceof AppCredentialsRefused) return { kind: 'refused', reason: err.githubReason };
      if (err instanceof GitHubRefused)
        return { kind: err.transient ? 'retry' : 'dropped', reason: err.message };
      if (!(err instanceof AppError)) throw err;
      // GitHub unreachable (or not issuing a token now) is an outage; the App broken or gone is final.
      return err.code === 'resource_unavailable'
        ? { kind: 'retry', reason: err.message }
        : { kind: 'dropped', reason: err.message };
    }
  }

  private async report(report: Report, run: AppRun, call: Call): Promise<void> {
    switch (report.kind) {
      case 'queued':
        return this.open(run, call, report.data.sha || (await this.defaultHead(call)), 'queued', true);
      case 'pushed':
        return this.open(run, call, report.data.sha ?? '', 'in_progress', false);
      case 'started':
        return this.move(report, run, call, { status: 'in_progress' });
      case 'completed': {
        const state = report.data.state ?? run.state;
        return this.move(report, run, call, {
          status: 'completed',
          conclusion: state === 'SUCCEEDED' ? 'success' : state === 'CANCELLED' ? 'cancelled' : 'failure',
          output: {
            title: `Run ${state.toLowerCase()}`,
            summary: sessionLinkOf(this.deps.publicApiBaseUrl, run.id),
          },
        });
      }
      case 'answer':
        return this.answer(run, call);
    }
  }

  private async defaultHead(call: Call): Promise<string> {
    const branch = (await call('GET', '')).body.default_branch;
    if (typeof branch !== 'string') return '';
    const sha = (await call('GET', `/commits/${encodeURIComponent(branch)}`)).body.sha;
    return typeof sha === 'string' ? sha : '';
  }

  private async open(run: AppRun, call: Call, sha: string, status: string, fresh: boolean): Promise<void> {
    if (!sha) return;
    const res = await call('POST', '/check-runs', {
      name: CHECK_NAME,
      head_sha: sha,
      status,
      external_id: run.id,
      details_url: sessionLinkOf(this.deps.publicApiBaseUrl, run.id),
    });
    const id = res.body.id;
    if (typeof id !== 'number') throw new GitHubRefused(res, false);
    // Read again: the run's metadata may have changed since the report was claimed.
    const current = await this.deps.db.run.findUniqueOrThrow({
      where: { id: run.id },
      select: { metadata: true },
    });
    const metadata = (current.metadata ?? {}) as Record<string, string>;
    const ids = fresh ? [] : (metadata[CHECKS_KEY] ?? '').split(',').filter(Boolean);
    await this.deps.db.run.update({
      where: { id: run.id },
      data: { metadata: { ...metadata, [CHECKS_KEY]: [...ids, String(id)].join(',') } },
    });
  }

  /** Each of the execution's checks once, even when the report is retried after some of them moved. */
  private async move(
    report: Report,
    run: AppRun,
    call: Call,
    fields: Record<string, unknown>,
  ): Promise<void> {
    const moved = new Set(report.data.moved ?? []);
    const ids = String((run.metadata as Record<string, unknown>)[CHECKS_KEY] ?? '')
      .split(',')
      .filter((id) => id && !moved.has(id));
    for (const id of ids) {
      await call('PATCH', `/check-runs/${id}`, fields);
      moved.add(id);
      await this.deps.db.gitHubAppReport.update({
        where: { id: report.id },
        data: { data: { ...report.data, moved: [...moved] } },
      });
    }
  }

  /**
   * The run answers where it was asked: a follow-up started by a review comment replies in that comment's thread
   * (GitHub's replies endpoint), one started by a review comments on the pull request, and the first execution
   * comments on the issue.
   */
  private async answer(run: AppRun, call: Call): Promise<void> {
    const { db, publicApiBaseUrl } = this.deps;
    const [full, pulls] = await Promise.all([
      db.run.findUniqueOrThrow({ where: { id: run.id } }),
      db.artifact.findMany({
        where: { runId: run.id, type: 'PULL_REQUEST' },
        orderBy: { createdAt: 'asc' },
        select: { data: true },
      }),
    ]);
    const body = runOutcomeLines(
      full,
      pulls.map((a) => String((a.data as { url?: unknown }).url)),
      publicApiBaseUrl,
      '**',
    ).join('\n\n');
    const metadata = (run.metadata ?? {}) as Record<string, unknown>;
    const [pull = '', comment = '0'] = String(metadata.github_reply_to ?? '').split(':');
    const path =
      pull && comment !== '0'
        ? `/pulls/${pull}/comments/${comment}/replies`
        : `/issues/${pull || String(metadata.github_number)}/comments`;
    await call('POST', path, { body });
  }
}
