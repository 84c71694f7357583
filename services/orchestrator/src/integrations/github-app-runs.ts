import type { GitHubApp } from '@conveyor/db';
import { EVENT_PAYLOAD_FILE } from '../automations/run-envelope';
import type { IntegrationEvaluator } from '../deliveries/delivery-processor';
import { ownerAndRepo } from '../egress/repository-url';
import { submitFollowup } from '../runs/submit-followup';
import { setRunMetadata, type IntegrationEvaluatorDeps } from './integration-runs';
import { decideGitHubApp, type GitHubRequester } from './github-app-trigger';
import { integrationFor } from './integration-deliveries';

/**
 * A repository's push credential when it is the run's GitHub App rather than a team secret (team secret names cannot
 * contain a colon, so the two never collide). Only the repository the App was asked about, of a run the App started,
 * is pushed with it (runner/push-run-branch.ts checks both against the run's metadata).
 */
export const GITHUB_APP_CREDENTIAL = 'github-app:';

type RepositorySpec = {
  url: string;
  push_secret_name?: string;
  pull_request?: Record<string, unknown>;
  clone?: 'platform';
};

/** Who asked and where, on the run (GET /v1/agent/runs shows it; the completion answers there). */
export const requesterMetadata = (app: GitHubApp, r: GitHubRequester): Record<string, string> => ({
  github_app_id: app.id,
  github_repository: r.repository,
  github_number: String(r.number),
  github_sender: r.sender,
  github_installation_id: String(r.installationId),
});

/**
 * The run pushes the repository it was asked about with the App (a draft pull request, linked to the issue by the
 * platform): the environment's entry for that repository when it has one, else the repository's clone URL from the
 * signed delivery is added. The platform clones it too (`clone: "platform"`: the orchestrator fetches it with the
 * installation token and the runner clones the bundle offline), so private repositories work and the token never
 * enters the sandbox.
 */
function withAppRepository(spec: unknown, app: GitHubApp, repository: string, cloneUrl: string): unknown {
  const environment = (spec ?? {}) as { repositories?: RepositorySpec[] };
  const repositories = [...(environment.repositories ?? [])];
  const same = (r: RepositorySpec) => {
    const { owner, repo } = ownerAndRepo(r.url);
    return `${owner}/${repo}`.toLowerCase() === repository.toLowerCase();
  };
  const index = repositories.findIndex(same);
  const entry: RepositorySpec = index >= 0 ? repositories[index]! : { url: cloneUrl };
  const pushed = {
    ...entry,
    push_secret_name: `${GITHUB_APP_CREDENTIAL}${app.id}`,
    clone: 'platform' as const,
    pull_request: { ...(entry.pull_request ?? {}), draft: true },
  };
  if (index >= 0) repositories[index] = pushed;
  else repositories.push(pushed);
  return { ...environment, repositories };
}

/**
 * What a delivery of an App's webhook starts: a run for an assignment, the App's label or a mention; a follow-up of
 * the run for a review or review comment on that run's pull request; nothing for anything else (recorded in the
 * delivery's outcome with the reason). A broken App starts nothing until it is registered again.
 */
export const evaluateGitHubAppDelivery = (deps: IntegrationEvaluatorDeps): IntegrationEvaluator =>
  integrationFor(
    {
      find: (webhookId: string) => deps.db.gitHubApp.findUnique({ where: { webhookId } }),
      label: 'GitHub App',
      broken: 'the App is broken',
      decide: decideGitHubApp,
      budget: { kinds: 'GitHub Apps', setting: 'GITHUB_APP_RUNS_PER_HOUR' },
    },
    deps,
    async (delivery) => {
      const {
        integration: app,
        decision,
        caller,
        outcomes: { only: outcome, started },
        payload,
        body,
      } = delivery;
      if (decision.kind === 'followup') {
        const run = await deps.db.run.findFirst({
          where: { id: decision.runId, teamId: app.teamId },
          select: { metadata: true },
        });
        if ((run?.metadata as Record<string, unknown> | null)?.github_app_id !== app.id)
          return outcome({ matched: false, mismatches: ['the pull request is not one of this App'] });
        const { runId, requester, commentId, headSha } = decision;
        const message = `Review by ${requester.sender} on ${requester.url}:\n${decision.message}`;
        return started(runId, {
          runs: [],
          after: async () => {
            // The execution this starts answers the comment, and its check is on the pull request's head (both
            // reported from the state change the follow-up writes: github-app-reports.ts).
            await setRunMetadata(deps.db, runId, {
              github_reply_to: `${requester.number}:${commentId}`,
              github_head_sha: headSha,
            });
            await submitFollowup(deps, caller, { runId, message });
          },
        });
      }
      const { requester } = decision;
      const cloneUrl = (payload as { repository?: { clone_url?: unknown } }).repository?.clone_url;
      return delivery.startRun({
        prompt: [
          `Resolve ${requester.repository}#${requester.number} (${requester.url}): it was ${decision.why === 'mentioned' ? 'mentioned to you' : decision.why} by ${requester.sender}.`,
          `Its title, text and comments are in ${EVENT_PAYLOAD_FILE}. Commit your change; the platform pushes it and opens a draft pull request.`,
        ].join('\n'),
        title: `${requester.repository}#${requester.number}: ${decision.request.split('\n')[0] ?? ''}`,
        config: app.environmentId ? { environment_id: app.environmentId } : {},
        metadata: requesterMetadata(app, requester),
        payload: body,
        source: 'GITHUB_WEBHOOK',
        environment: (spec) =>
          withAppRepository(
            spec,
            app,
            requester.repository,
            typeof cloneUrl === 'string' ? cloneUrl : `https://github.com/${requester.repository}.git`,
          ),
      });
    },
  );
