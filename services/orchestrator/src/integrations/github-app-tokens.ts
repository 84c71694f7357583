import { AppError } from '@conveyor/errors';
import type { PrismaClient } from '@conveyor/db';
import { AppCredentialsRefused, type InstallationTokens } from '../github/github-app-auth';
import type { SecretCipher } from '../secrets/secret-cipher';
import { appCredentials, markGitHubAppBroken } from './github-apps';

export interface GitHubAppTokenDeps {
  db: PrismaClient;
  cipher: SecretCipher;
  tokens: InstallationTokens;
}

/**
 * The installation token for a run a GitHub App started, limited to the one repository the App was asked about: a
 * run of another source, another repository, or a broken App gets none. GitHub refusing the App's credentials marks
 * it broken with GitHub's reason, so later deliveries start nothing instead of failing the same way again.
 */
export async function appTokenForRun(
  deps: GitHubAppTokenDeps,
  run: { teamId: string; source: string; metadata: unknown },
  repository: string,
): Promise<string> {
  const metadata = (run.metadata ?? {}) as Record<string, unknown>;
  const appId = String(metadata.github_app_id ?? '');
  if (String(metadata.github_repository ?? '').toLowerCase() !== repository.toLowerCase())
    throw new AppError(
      'not_authorized',
      `The run's GitHub App acts on ${String(metadata.github_repository)} only, not ${repository}`,
    );
  const app = await deps.db.gitHubApp.findFirst({ where: { id: appId, teamId: run.teamId } });
  // A run's metadata is the caller's to choose through the API: only a run the App's own webhook started (its source
  // and webhook are set by the platform) may use the App.
  if (!app || run.source !== 'GITHUB_WEBHOOK' || metadata.webhook_uid !== app.webhookId)
    throw new AppError('integration_not_configured', 'The run was not started by a registered GitHub App');
  if (app.status !== 'active')
    throw new AppError(
      'integration_disabled',
      `GitHub App "${app.name}" is broken: ${app.brokenReason ?? ''}`,
    );
  try {
    return await deps.tokens.token(
      app.id,
      appCredentials(deps.cipher, app),
      Number(metadata.github_installation_id),
      repository.slice(repository.indexOf('/') + 1),
    );
  } catch (err) {
    if (err instanceof AppCredentialsRefused) await markGitHubAppBroken(deps.db, app.id, err.githubReason);
    throw err;
  }
}
