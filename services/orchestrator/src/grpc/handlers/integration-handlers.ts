import type { Logger } from '@conveyor/logger';
import type { IntegrationServiceHandlers } from '@conveyor/proto';
import { githubAppToProto } from '../mappers/github-app-to-proto';
import { slackAppToProto } from '../mappers/slack-app-to-proto';
import { linearIntegrationToProto } from '../mappers/linear-integration-to-proto';
import { requireCaller } from '../require-caller';
import { unary } from '../unary-handler';
import {
  createGitHubApp,
  deleteGitHubApp,
  getGitHubApp,
  listGitHubApps,
  type GitHubAppDeps,
} from '../../integrations/github-apps';
import { completeGitHubAppManifest, startGitHubAppManifest } from '../../integrations/github-app-manifests';
import {
  createSlackApp,
  deleteSlackApp,
  getSlackApp,
  listSlackApps,
  type SlackAppDeps,
} from '../../integrations/slack/slack-apps';
import {
  createLinearIntegration,
  deleteLinearIntegration,
  getLinearIntegration,
  listLinearIntegrations,
  type LinearIntegrationDeps,
} from '../../integrations/linear/linear-integrations';

/** IntegrationService: each RPC is one domain function behind the shared gRPC error wrapper. */
export function integrationHandlers(
  deps: GitHubAppDeps & SlackAppDeps & LinearIntegrationDeps & { logger: Logger },
): IntegrationServiceHandlers {
  const { logger } = deps;
  return {
    CreateGitHubApp: unary(logger, 'CreateGitHubApp', (req) =>
      createGitHubApp(deps, requireCaller(req.caller), req).then(githubAppToProto),
    ),
    ListGitHubApps: unary(logger, 'ListGitHubApps', async (req) => ({
      github_apps: (await listGitHubApps(deps, requireCaller(req.caller))).map(githubAppToProto),
    })),
    GetGitHubApp: unary(logger, 'GetGitHubApp', (req) =>
      getGitHubApp(deps, requireCaller(req.caller), req.github_app_id).then(githubAppToProto),
    ),
    DeleteGitHubApp: unary(logger, 'DeleteGitHubApp', async (req) => {
      await deleteGitHubApp(deps, requireCaller(req.caller), req.github_app_id);
      return {};
    }),
    StartGitHubAppManifest: unary(logger, 'StartGitHubAppManifest', async (req) => {
      const started = await startGitHubAppManifest(deps, requireCaller(req.caller), req);
      return {
        post_url: started.postUrl,
        manifest: JSON.stringify(started.manifest),
        state: started.state,
        expires_at: started.expiresAt.toISOString(),
        webhook_url: started.webhookUrl,
      };
    }),
    // The browser comes back from GitHub without a key: the state is the authority, a caller only narrows it.
    CompleteGitHubAppManifest: unary(logger, 'CompleteGitHubAppManifest', (req) =>
      completeGitHubAppManifest(
        deps,
        req.caller?.team_id ? requireCaller(req.caller) : undefined,
        req.state,
        req.code,
      ).then(githubAppToProto),
    ),
    CreateSlackApp: unary(logger, 'CreateSlackApp', (req) =>
      createSlackApp(deps, requireCaller(req.caller), req).then(slackAppToProto),
    ),
    ListSlackApps: unary(logger, 'ListSlackApps', async (req) => ({
      slack_apps: (await listSlackApps(deps, requireCaller(req.caller))).map(slackAppToProto),
    })),
    GetSlackApp: unary(logger, 'GetSlackApp', (req) =>
      getSlackApp(deps, requireCaller(req.caller), req.slack_app_id).then(slackAppToProto),
    ),
    DeleteSlackApp: unary(logger, 'DeleteSlackApp', async (req) => {
      await deleteSlackApp(deps, requireCaller(req.caller), req.slack_app_id);
      return {};
    }),
    CreateLinearIntegration: unary(logger, 'CreateLinearIntegration', (req) =>
      createLinearIntegration(deps, requireCaller(req.caller), req).then(linearIntegrationToProto),
    ),
    ListLinearIntegrations: unary(logger, 'ListLinearIntegrations', async (req) => ({
      linear_integrations: (await listLinearIntegrations(deps, requireCaller(req.caller))).map(
        linearIntegrationToProto,
      ),
    })),
    GetLinearIntegration: unary(logger, 'GetLinearIntegration', (req) =>
      getLinearIntegration(deps, requireCaller(req.caller), req.linear_integration_id).then(
        linearIntegrationToProto,
      ),
    ),
    DeleteLinearIntegration: unary(logger, 'DeleteLinearIntegration', async (req) => {
      await deleteLinearIntegration(deps, requireCaller(req.caller), req.linear_integration_id);
      return {};
    }),
  };
}
