import type { PrismaClient } from '@conveyor/db';
import type { Logger } from '@conveyor/logger';
import { sessionLinkOf } from '../events/event-body';
import { githubMessage, githubRequest, type GitHubApi } from '../github/github-rest';
import { appTokenForRun, type GitHubAppTokenDeps } from './github-app-tokens';

export interface CheckRunDeps {
  db: PrismaClient;
  github: GitHubApi;
  appTokens: GitHubAppTokenDeps;
  publicApiBaseUrl: string;
  logger: Logger;
}

/** The check's name on GitHub. */
const CHECK_NAME = 'Conveyor';
/** The run's check runs on GitHub, in its metadata: comma-separated IDs (one per commit the execution touched). */
const CHECKS_KEY = 'github_check_runs';

type AppRun = { id: string; teamId: string; source: string; state: string; metadata: unknown };

/**
 * A GitHub App's run reports its progress as check runs (docs/integrations.md "Progress"): queued when the delivery
 * is processed (on the base branch's head, or the pull request's head for a review), in progress when a runner claims
 * it, one more on each commit it pushes, and all completed with the outcome and the session link when it ends.
 * Best effort: GitHub refusing a check is logged, never the run's failure.
 */
export class GitHubAppChecks {
  /** Each run's reports in the order they were asked for: a fast claim must not overtake the queued check's creation. */
  private readonly chains = new Map<string, Promise<void>>();

  constructor(private readonly deps: CheckRunDeps) {}

  /** A new execution's first check: `headSha`, or the head of the repository's default branch. */
  readonly queued = (runId: string, headSha?: string): Promise<void> =>
    this.guard(runId, async (run, call) => {
      const sha = headSha || (await this.defaultHead(call));
      if (sha) await this.open(run, call, sha, 'queued', true);
    });

  readonly started = (runId: string): Promise<void> =>
    this.guard(runId, (run, call) => this.update(run, call, { status: 'in_progress' }));

  /** The commit an execution pushed gets its own check (a pull request shows its head commit's checks). */
  readonly pushed = (runId: string, commit: string): Promise<void> =>
    this.guard(runId, (run, call) => this.open(run, call, commit, 'in_progress', false));

  readonly completed = (runId: string): Promise<void> =>
    this.guard(runId, (run, call) =>
      this.update(run, call, {
        status: 'completed',
        conclusion:
          run.state === 'SUCCEEDED' ? 'success' : run.state === 'CANCELLED' ? 'cancelled' : 'failure',
        output: {
          title: `Run ${run.state.toLowerCase()}`,
          summary: sessionLinkOf(this.deps.publicApiBaseUrl, run.id),
        },
      }),
    );

  /** Chained synchronously, so the order of the calls is the order of the reports. */
  private guard(runId: string, work: Parameters<GitHubAppChecks['report']>[1]): Promise<void> {
    const next = (this.chains.get(runId) ?? Promise.resolve()).then(() => this.report(runId, work));
    this.chains.set(runId, next);
    void next.finally(() => {
      if (this.chains.get(runId) === next) this.chains.delete(runId);
    });
    return next;
  }

  private async report(
    runId: string,
    work: (
      run: AppRun,
      call: (
        method: 'GET' | 'POST' | 'PATCH',
        path: string,
        body?: unknown,
      ) => ReturnType<typeof githubRequest>,
    ) => Promise<void>,
  ): Promise<void> {
    // Every claim of every run asks (`started`), and its callers do not wait: nothing here may reject, a database
    // outage included (an unhandled rejection ends the orchestrator).
    const log = this.deps.logger.child({ runId });
    try {
      const run = await this.deps.db.run.findUnique({
        where: { id: runId },
        select: { id: true, teamId: true, source: true, state: true, metadata: true },
      });
      const metadata = (run?.metadata ?? {}) as Record<string, unknown>;
      if (!run || typeof metadata.github_app_id !== 'string') return;
      const repository = String(metadata.github_repository);
      const token = await appTokenForRun(this.deps.appTokens, run, repository);
      const [owner, repo] = repository.split('/').map(encodeURIComponent) as [string, string];
      await work(run, (method, path, body) =>
        githubRequest(this.deps.github, token, method, `/repos/${owner}/${repo}${path}`, body),
      );
    } catch (err) {
      log.warn({ err: (err as Error).message }, 'reporting the check run failed');
    }
  }

  private async defaultHead(call: (method: 'GET', path: string) => ReturnType<typeof githubRequest>) {
    const repo = await call('GET', '');
    const branch = repo.body.default_branch;
    if (typeof branch !== 'string') return undefined;
    const commit = await call('GET', `/commits/${encodeURIComponent(branch)}`);
    return typeof commit.body.sha === 'string' ? commit.body.sha : undefined;
  }

  private async open(
    run: AppRun,
    call: (method: 'POST', path: string, body: unknown) => ReturnType<typeof githubRequest>,
    sha: string,
    status: 'queued' | 'in_progress',
    fresh: boolean,
  ): Promise<void> {
    const res = await call('POST', '/check-runs', {
      name: CHECK_NAME,
      head_sha: sha,
      status,
      external_id: run.id,
      details_url: sessionLinkOf(this.deps.publicApiBaseUrl, run.id),
    });
    const id = res.body.id;
    if (res.status !== 201 || typeof id !== 'number') throw new Error(`GitHub: ${githubMessage(res)}`);
    // Read again: the claim may have written its own update meanwhile.
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

  private async update(
    run: AppRun,
    call: (method: 'PATCH', path: string, body: unknown) => ReturnType<typeof githubRequest>,
    fields: Record<string, unknown>,
  ): Promise<void> {
    const ids = String((run.metadata as Record<string, unknown>)[CHECKS_KEY] ?? '')
      .split(',')
      .filter(Boolean);
    for (const id of ids) {
      const res = await call('PATCH', `/check-runs/${id}`, fields);
      if (res.status !== 200) throw new Error(`GitHub: ${githubMessage(res)}`);
    }
  }
}
