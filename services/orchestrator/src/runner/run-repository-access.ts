import { AppError } from '@conveyor/errors';
import type { PrismaClient, Run } from '@conveyor/db';
import { redactUrl } from '@conveyor/logger';
import type { GitFetchPlan } from '../egress/git-egress';
import { ownerAndRepo, type PullRequestSpec } from '../egress/repository-url';
import { GITHUB_APP_CREDENTIAL } from '../integrations/github-app-runs';
import { appTokenForRun, type GitHubAppTokenDeps } from '../integrations/github-app-tokens';
import { SecretCipherError, type SecretCipher } from '../secrets/secret-cipher';
import { readTeamSecretValue } from '../secrets/team-secrets';
import { lockRunForRunner } from './report-events';
import type { RunnerExecution } from './runner-messages';

export interface RunRepositoryAccessDeps {
  db: PrismaClient;
  cipher: SecretCipher;
  /** Checks a repository URL against the egress rules right before git reaches it (egress/git-egress.ts). */
  planFetch: (url: string) => Promise<GitFetchPlan>;
  /** Installation tokens of the runs a GitHub App started (integrations/github-app-tokens.ts). */
  appTokens: GitHubAppTokenDeps;
}

export type RepositorySpec = {
  url: string;
  ref?: string;
  push_secret_name?: string;
  pull_request?: PullRequestSpec;
  /** `platform`: the orchestrator fetches it with its credential and the runner clones the bundle (FetchRunRepository). */
  clone?: 'platform';
};

export const runBranchName = (runId: string): string => `conveyor/run-${runId}`;

/** One repository of a run, for the runner holding the execution: the run, its spec and its URL as shown. */
export async function runRepository(
  deps: Pick<RunRepositoryAccessDeps, 'db'>,
  req: RunnerExecution & { repository: number },
): Promise<{ run: Run; repo: RepositorySpec; shown: string }> {
  const run = await deps.db.$transaction((tx) =>
    lockRunForRunner(tx, req.run_id, req.execution, req.runner_id),
  );
  const repositories =
    ((run.environmentSpec ?? {}) as { repositories?: RepositorySpec[] }).repositories ?? [];
  const repo = repositories[req.repository];
  if (!repo)
    throw new AppError('invalid_request', `The run's environment has no repository ${req.repository}`);
  return { run, repo, shown: redactUrl(repo.url) };
}

/**
 * The credential a repository of the run is reached with: the GitHub App's installation token (limited to that one
 * repository, of a run the App started) or the team secret `push_secret_name` names. It stays on the orchestrator.
 */
export async function repositoryCredential(
  deps: RunRepositoryAccessDeps,
  run: Run,
  repo: RepositorySpec,
  index: number,
): Promise<string> {
  const shown = redactUrl(repo.url);
  if (!repo.push_secret_name)
    throw new AppError('invalid_request', `Repository ${shown} names no push_secret_name`);
  if (repo.push_secret_name.startsWith(GITHUB_APP_CREDENTIAL)) {
    const { owner, repo: name } = ownerAndRepo(repo.url);
    return appTokenForRun(deps.appTokens, run, `${owner}/${name}`);
  }
  const field = `repositories[${index}].push_secret_name`;
  const notConfigured = (message: string) =>
    new AppError('integration_not_configured', message, {
      details: { secret_name: repo.push_secret_name, repository: shown },
    });
  let secret: string | undefined;
  try {
    secret = await readTeamSecretValue(deps.db, deps.cipher, run.teamId, repo.push_secret_name);
  } catch (err) {
    if (!(err instanceof SecretCipherError)) throw err;
    throw notConfigured(
      `Team secret "${repo.push_secret_name}" (${field}) could not be decrypted; set its value again`,
    );
  }
  if (!secret)
    throw notConfigured(
      `Team secret "${repo.push_secret_name}" (${field}) does not exist; add a push credential for ${shown} as that team secret`,
    );
  return secret;
}

/**
 * What git reaches the remote with: the egress plan (checked, pinned) and the credential as git's own configuration in
 * the environment (never on a command line, never in a URL git could echo): an `Authorization: Basic` header for
 * http(s). A secret `user:password` is used as is; a bare token is sent with the user `x-access-token`, which GitHub,
 * GitLab and Gitea accept for access tokens.
 */
export async function remoteAccess(
  deps: Pick<RunRepositoryAccessDeps, 'planFetch'>,
  url: string,
  secret: string,
): Promise<GitFetchPlan> {
  const plan = await deps.planFetch(url);
  const userPassword = secret.includes(':') ? secret : `x-access-token:${secret}`;
  return {
    configArgs: plan.configArgs,
    env: {
      ...plan.env,
      GIT_CONFIG_COUNT: '1',
      GIT_CONFIG_KEY_0: 'http.extraHeader',
      GIT_CONFIG_VALUE_0: `Authorization: Basic ${Buffer.from(userPassword).toString('base64')}`,
    },
  };
}

/** A git failure against the remote as a typed error: a refused credential, or anything else (unreachable, rejected). */
export function remoteFailure(err: unknown, what: string): AppError {
  if (err instanceof AppError) return err;
  const message = redactUrl((err as Error).message);
  const refused = /authenticat|401|403|denied|could not read Username/i.test(message);
  return new AppError(
    refused ? 'external_authentication_required' : 'resource_unavailable',
    `${what} failed: ${message}`,
  );
}
