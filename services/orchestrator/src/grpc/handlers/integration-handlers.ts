import type { Logger } from '@conveyor/logger';
import type { IntegrationServiceHandlers } from '@conveyor/proto';
import { githubAppToProto } from '../mappers/github-app-to-proto';
import { slackAppToProto } from '../mappers/slack-app-to-proto';
import { requireCaller } from '../require-caller';
import { unary } from '../unary-handler';
import {
  createGitHubApp,
  deleteGitHubApp,
  getGitHubApp,
  listGitHubApps,
  type GitHubAppDeps,
} from '../../integrations/github-apps';
import {
  createSlackApp,
  deleteSlackApp,
  getSlackApp,
  listSlackApps,
  type SlackAppDeps,
} from '../../integrations/slack/slack-apps';

/** IntegrationService: each RPC is one domain function behind the shared gRPC error wrapper. */
export function integrationHandlers(
  deps: GitHubAppDeps & SlackAppDeps & { logger: Logger },
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
  };
}
