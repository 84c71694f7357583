import type { Redis } from 'ioredis';
import type { PrismaClient } from '@conveyor/db';
import type { Logger } from '@conveyor/logger';
import { loopPart, type ServiceParts } from '@conveyor/runtime';
import type { OrchestratorConfig } from '../config';
import type { PrepareRun } from '../deliveries/delivery-processor';
import { InstallationTokens } from '../github/github-app-auth';
import { AppRunBudget } from '../integrations/app-run-budget';
import { GitHubAppReports } from '../integrations/github-app-reports';
import { evaluateGitHubAppDelivery } from '../integrations/github-app-runs';
import { anyIntegration } from '../integrations/integration-deliveries';
import { LinearReporter } from '../integrations/linear/linear-reports';
import { evaluateLinearDelivery } from '../integrations/linear/linear-runs';
import { evaluateSlackAppDelivery } from '../integrations/slack/slack-app-runs';
import { SlackPoster } from '../integrations/slack/slack-poster';
import { kickOnNotification, type OutsideWorld } from './adapters';

export interface IntegrationsDeps {
  config: OrchestratorConfig;
  logger: Logger;
  parts: ServiceParts;
  db: PrismaClient;
  redis: Redis;
  outside: OutsideWorld;
  kickOutbox: () => void;
  prepareRun: PrepareRun;
}

/**
 * The GitHub App, Slack app and Linear integrations: their credentials stay in this process; what they report back
 * (check runs, thread replies, issue comments) is sent from here, and their webhooks' deliveries start runs through
 * one evaluator.
 */
export async function startIntegrations(deps: IntegrationsDeps) {
  const { config, logger, parts, db, redis, outside, kickOutbox, prepareRun } = deps;
  const { cipher, github, slack, linear } = outside;
  const budget = (integration: string, runsPerHour: number) =>
    new AppRunBudget(redis, { runsPerHour, keyPrefix: config.RATE_LIMIT_REDIS_PREFIX, integration });

  const installationTokens = new InstallationTokens(github);
  const appTokens = { db, cipher, tokens: installationTokens };
  const githubAppReports = new GitHubAppReports({
    db,
    github,
    appTokens,
    publicApiBaseUrl: config.PUBLIC_API_BASE_URL,
    logger: logger.child({ component: 'github-app-reports' }),
    schedule: config.GITHUB_APP_REPORT_RETRY_SCHEDULE_MS,
    intervalMs: config.EVENT_DISPATCH_INTERVAL_MS,
  });
  await parts.add(loopPart('github app reports', githubAppReports.queue));

  const linearReports = new LinearReporter({
    db,
    cipher,
    linear,
    logger: logger.child({ component: 'linear-reports' }),
    publicApiBaseUrl: config.PUBLIC_API_BASE_URL,
    schedule: config.LINEAR_REPORT_RETRY_SCHEDULE_MS,
    intervalMs: 5_000,
  });
  await parts.add(loopPart('linear reporter', linearReports.queue));
  // The triggers that write GitHub App and Linear reports notify on one channel.
  await kickOnNotification(config, logger, parts, {
    name: 'integration reports',
    channel: 'integration_reports',
    kick: async () => {
      await Promise.all([githubAppReports.queue.kick(), linearReports.queue.kick()]);
    },
  });

  const slackPoster = new SlackPoster({
    db,
    cipher,
    slack,
    publicApiBaseUrl: config.PUBLIC_API_BASE_URL,
    logger: logger.child({ component: 'slack-poster' }),
    intervalMs: config.EVENT_DISPATCH_INTERVAL_MS,
  });
  await parts.add(loopPart('slack poster', slackPoster.queue));
  await kickOnNotification(config, logger, parts, {
    name: 'slack posts',
    channel: 'slack_posts',
    kick: () => slackPoster.queue.kick(),
  });

  const runDeps = { db, kickOutbox, prepareRun };
  const evaluateDelivery = anyIntegration(
    evaluateGitHubAppDelivery({
      ...runDeps,
      budget: budget('github-app', config.GITHUB_APP_RUNS_PER_HOUR),
    }),
    evaluateSlackAppDelivery({ ...runDeps, budget: budget('slack-app', config.SLACK_APP_RUNS_PER_HOUR) }),
    evaluateLinearDelivery({ ...runDeps, budget: budget('linear', config.LINEAR_RUNS_PER_HOUR) }),
  );

  return { installationTokens, appTokens, githubAppReports, linearReports, evaluateDelivery };
}
