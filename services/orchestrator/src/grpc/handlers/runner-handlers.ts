import type { PrismaClient } from '@conveyor/db';
import type { Logger } from '@conveyor/logger';
import type { RunnerServiceHandlers } from '@conveyor/proto';
import { unary } from '../unary-handler';
import { runLeaseHandlers } from './run-lease-handlers';
import { runStateHandlers } from './run-state-handlers';
import { claimRun } from '../../runner/claim-run';
import { commentOnRunSource, type SourceCommentDeps } from '../../github/comment-on-source';
import { completeRun, type TranscriptSink } from '../../runner/complete-run';
import type { HarnessSessions } from '../../runner/harness-sessions';
import { getHarnessCredential, type HarnessCredentialDeps } from '../../runner/harness-credential';
import { fetchRunRepository } from '../../runner/fetch-run-repository';
import { pushRunBranch, type PushRunBranchDeps } from '../../runner/push-run-branch';
import { heartbeat, reportEvents } from '../../runner/report-events';
import type { GitHubAppReports } from '../../integrations/github-app-reports';
import type { LinearReporter } from '../../integrations/linear/linear-reports';

export interface RunnerHandlerDeps
  extends HarnessCredentialDeps, PushRunBranchDeps, Omit<SourceCommentDeps, 'logger'> {
  db: PrismaClient;
  /**
   * The check run of each commit a GitHub App's run pushed (the other runs are left alone; its other reports are
   * written by the state changes themselves).
   */
  githubAppReports: Pick<GitHubAppReports, 'pushed'>;
  /** Pull requests owed to the Linear issues that started runs (their ends are written by the completion itself). */
  linearReports: Pick<LinearReporter, 'pullRequestOpened'>;
  logger: Logger;
  saveTranscript: TranscriptSink;
  sessions: HarnessSessions;
  debugWindowMinutes: number;
  /** RUN_LEASE_EXPIRY_MS (docs/sandbox.md "Run leases"). */
  leaseExpiryMs: number;
  /** A running run with no heartbeat for this long is abandoned, for the runners' orphan reconciler. */
  abandonedAfterMs: number;
  /** Public REST API base URL handed to harnesses with their run-scoped key. */
  apiBaseUrl?: string;
}

export function runnerHandlers(deps: RunnerHandlerDeps): RunnerServiceHandlers {
  const { db, logger } = deps;
  // After the answer: the report's row is written (then sent with retries) without the runner waiting.
  const recordReport = (what: string, recording: Promise<void>) =>
    void recording.catch((err: unknown) =>
      logger.warn({ err: (err as Error).message }, `recording ${what} failed`),
    );
  return {
    ...runLeaseHandlers({ db, cipher: deps.cipher, logger, expiryMs: deps.leaseExpiryMs }),
    ...runStateHandlers({ db, logger, abandonedAfterMs: deps.abandonedAfterMs }),
    ClaimRun: unary(logger, 'ClaimRun', async (req) => {
      // Self-hosted runs are claimed for their worker by the WorkerService dispatcher, never through the pool.
      const assignment = {
        ...(await deps.sessions.attach(
          await claimRun(db, req, {
            refuseSelfHosted: true,
            acknowledgesFollowups: req.acknowledges_followups,
          }),
        )),
        api_base_url: deps.apiBaseUrl ?? '',
      };
      logger.info(
        {
          runId: req.run_id,
          execution: req.execution,
          runnerId: req.runner_id,
          debug: assignment.debug_session,
        },
        'run claimed',
      );
      return assignment;
    }),
    ReportEvents: unary(logger, 'ReportEvents', (req) => reportEvents(db, req)),
    Heartbeat: unary(logger, 'Heartbeat', (req) => heartbeat(db, req)),
    CompleteRun: unary(logger, 'CompleteRun', async (req) => {
      const { control, source, replayed } = await completeRun(deps, req);
      logger.info(
        {
          runId: req.run_id,
          execution: req.execution,
          state: req.state,
          errorCode: req.error_code || undefined,
          ...(replayed ? { replayed } : {}),
        },
        'run execution completed',
      );
      // After the answer: the runner does not wait on GitHub, and a failed comment is only logged. Only runs a GitHub
      // delivery started comment (the check saves two reads on every other completion).
      if (source === 'GITHUB_WEBHOOK' && !replayed)
        void commentOnRunSource({ ...deps, logger }, req.run_id).catch((err: unknown) =>
          logger.warn(
            { runId: req.run_id, err: (err as Error).message },
            'commenting on the run source failed',
          ),
        );
      return control;
    }),
    GetHarnessCredential: unary(logger, 'GetHarnessCredential', async (req) => {
      const credential = await getHarnessCredential(deps, req);
      // Which secret, never its value.
      logger.info(
        {
          runId: req.run_id,
          execution: req.execution,
          runnerId: req.runner_id,
          secret: credential.secret_name,
        },
        'harness credential handed to runner',
      );
      return credential;
    }),
    PushRunBranch: unary(logger, 'PushRunBranch', async (req) => {
      const pushed = await pushRunBranch(deps, req);
      logger.info(
        {
          runId: req.run_id,
          execution: req.execution,
          repository: pushed.repository_url,
          branch: pushed.branch,
          commit: pushed.commit,
        },
        'run branch pushed',
      );
      recordReport('a GitHub check run', deps.githubAppReports.pushed(req.run_id, pushed.commit));
      if (pushed.pull_request?.url)
        recordReport(
          'a Linear report',
          deps.linearReports.pullRequestOpened(req.run_id, pushed.pull_request.url),
        );
      return pushed;
    }),
    FetchRunRepository: unary(logger, 'FetchRunRepository', async (req) => {
      const fetched = await fetchRunRepository(deps, req);
      logger.info(
        {
          runId: req.run_id,
          execution: req.execution,
          repository: req.repository,
          branch: fetched.branch,
          bytes: fetched.bundle.length,
        },
        'run repository fetched for the runner',
      );
      return fetched;
    }),
  };
}
