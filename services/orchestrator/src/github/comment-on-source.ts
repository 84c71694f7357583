import type { PrismaClient } from '@conveyor/db';
import type { Logger } from '@conveyor/logger';
import { TERMINAL_STATES } from '@conveyor/run-events';
import { ownerAndRepo } from '../egress/repository-url';
import { runOutcomeLines } from '../events/run-outcome-text';
import type { SecretCipher } from '../secrets/secret-cipher';
import { readTeamSecretValue } from '../secrets/team-secrets';
import { apiTokenOf, githubMessage, githubRequest, type GitHubApi } from './github-rest';

export interface SourceCommentDeps {
  db: PrismaClient;
  cipher: SecretCipher;
  github: GitHubApi;
  publicApiBaseUrl: string;
  logger: Logger;
}

type Payload = {
  repository?: { full_name?: unknown };
  issue?: { number?: unknown };
  pull_request?: { number?: unknown };
};

/** The issue or pull request a GitHub delivery is about: `owner/repo` and its number; undefined for anything else. */
export function issueOf(payload: unknown): { fullName: string; number: number } | undefined {
  const p = (payload ?? {}) as Payload;
  const fullName = p.repository?.full_name;
  const number = p.issue?.number ?? p.pull_request?.number;
  if (typeof fullName !== 'string' || !/^[^/]+\/[^/]+$/.test(fullName)) return undefined;
  if (typeof number !== 'number' || !Number.isInteger(number) || number <= 0) return undefined;
  return { fullName, number };
}

/**
 * When a run started by a GitHub webhook delivery about an issue or a pull request has ended, comments there with the
 * result, the pull requests it opened and its console link (POST /repos/{owner}/{repo}/issues/{n}/comments). The
 * token is the push secret of the environment's repository that the issue belongs to: a run whose environment cannot
 * write to that repository says nothing. Best effort: a failure is logged, never the run's.
 */
export async function commentOnRunSource(deps: SourceCommentDeps, runId: string): Promise<void> {
  const run = await deps.db.run.findUnique({
    where: { id: runId },
    include: { artifacts: { where: { type: 'PULL_REQUEST' }, orderBy: { createdAt: 'asc' } } },
  });
  // Only a run that ended (an ERROR to be retried is back in the queue); a debug execution leaves the run as it was.
  if (!run || run.source !== 'GITHUB_WEBHOOK' || !TERMINAL_STATES.has(run.state)) return;
  const metadata = (run.metadata ?? {}) as Record<string, unknown>;
  const lines = runOutcomeLines(
    run,
    run.artifacts.map((a) => String((a.data as { url?: unknown }).url)),
    deps.publicApiBaseUrl,
    '**',
  );
  // A GitHub App's run answers as the App, through its report queue (integrations/github-app-reports.ts).
  if (typeof metadata.github_app_id === 'string') return;
  const delivery = await deps.db.webhookDelivery.findFirst({
    where: { webhookId: String(metadata.webhook_uid), deliveryId: String(metadata.delivery_id) },
    select: { payload: true },
  });
  let payload: unknown;
  try {
    payload = JSON.parse(delivery?.payload ? Buffer.from(delivery.payload).toString('utf8') : 'null');
  } catch {
    return;
  }
  const issue = issueOf(payload);
  if (!issue) return;
  const log = deps.logger.child({ runId, issue: `${issue.fullName}#${issue.number}` });
  const repositories =
    ((run.environmentSpec ?? {}) as { repositories?: Array<{ url: string; push_secret_name?: string }> })
      .repositories ?? [];
  const writable = repositories.find((r) => {
    const { owner, repo } = ownerAndRepo(r.url);
    return r.push_secret_name && `${owner}/${repo}`.toLowerCase() === issue.fullName.toLowerCase();
  });
  if (!writable?.push_secret_name) {
    log.info('no push secret for the issue repository in the environment; not commenting');
    return;
  }
  const secret = await readTeamSecretValue(deps.db, deps.cipher, run.teamId, writable.push_secret_name);
  if (!secret)
    return void log.warn({ secret: writable.push_secret_name }, 'push secret missing; not commenting');
  const [owner, repo] = issue.fullName.split('/') as [string, string];
  const path = `/repos/${encodeURIComponent(owner)}/${encodeURIComponent(repo)}/issues/${issue.number}/comments`;
  const res = await githubRequest(deps.github, apiTokenOf(secret), 'POST', path, {
    body: lines.join('\n\n'),
  });
  if (res.status === 201) log.info('commented on the issue that started the run');
  else log.warn({ status: res.status, github: githubMessage(res) }, 'GitHub refused the comment');
}
