import type { PrismaClient, SlackApp } from '@conveyor/db';
import { EVENT_PAYLOAD_FILE } from '../../automations/run-envelope';
import type { IntegrationEvaluator } from '../../deliveries/delivery-processor';
import { submitFollowup } from '../../runs/submit-followup';
import { integrationFor } from '../integration-deliveries';
import type { IntegrationEvaluatorDeps } from '../integration-runs';
import { decideSlack, type SlackRequester } from './slack-trigger';

/**
 * Who asked and where, on the run (GET /v1/agent/runs shows it); the app's messages go to that channel and thread
 * (`slack_thread_ts` is written by the first post when a slash command started the run).
 */
export const slackRequesterMetadata = (app: SlackApp, r: SlackRequester): Record<string, string> => ({
  slack_app_id: app.id,
  slack_team_id: app.slackTeamId,
  slack_user: r.user,
  slack_channel: r.channel,
  ...(r.threadTs ? { slack_thread_ts: r.threadTs } : {}),
});

/** The environment a request names (`env:<name>`, one of the team's), else the app's (else the team's default). */
async function environmentFor(
  db: PrismaClient,
  app: SlackApp,
  name: string | undefined,
): Promise<{ environment_id?: string } | string> {
  if (!name) return app.environmentId ? { environment_id: app.environmentId } : {};
  const found = await db.environment.findFirst({
    where: { teamId: app.teamId, scopeType: 'TEAM', name },
    select: { id: true },
  });
  return found ? { environment_id: found.id } : `no team environment named "${name}"`;
}

/**
 * What a delivery of a Slack app's webhook starts: a run for the slash command or a mention, a follow-up of the run
 * for a message in a thread one of the app's runs answers in, nothing for anything else (recorded in the delivery's
 * outcome with the reason). A broken app starts nothing until it is registered again. The thread replies themselves
 * are written by the run's state changes (slack-poster.ts).
 */
export const evaluateSlackAppDelivery = (deps: IntegrationEvaluatorDeps): IntegrationEvaluator =>
  integrationFor(
    {
      find: (webhookId: string) => deps.db.slackApp.findUnique({ where: { webhookId } }),
      label: 'Slack app',
      broken: 'the app is broken',
      decide: decideSlack,
      budget: { kinds: 'Slack apps', setting: 'SLACK_APP_RUNS_PER_HOUR' },
    },
    deps,
    async (delivery) => {
      const {
        integration: app,
        decision,
        caller,
        outcomes: { only: outcome, started },
      } = delivery;
      if (decision.kind === 'thread') {
        const { channel, threadTs, user } = decision.requester;
        const thread = await deps.db.slackThread.findUnique({
          where: { slackAppId_channel_threadTs: { slackAppId: app.id, channel, threadTs } },
          select: { runId: true },
        });
        if (thread) {
          const { runId } = thread;
          const message = `Follow-up from Slack user ${user}:\n${decision.message}`;
          return started(runId, {
            runs: [],
            after: async () => void (await submitFollowup(deps, caller, { runId, message })),
          });
        }
        if (!decision.startOtherwise)
          return outcome({ matched: false, mismatches: ["not a thread one of the app's runs answers in"] });
      }
      const { requester, environmentName } = decision;
      const prompt = decision.kind === 'start' ? decision.prompt : decision.message;
      const environment = await environmentFor(deps.db, app, environmentName);
      if (typeof environment === 'string')
        return outcome({ matched: true, error: `invalid_request: ${environment}` });
      // The request as the run sees it: what was asked, by whom, where; not the delivery's body (which carries Slack's
      // verification token and a response URL).
      const request = Buffer.from(
        JSON.stringify({
          user: requester.user,
          channel: requester.channel,
          ...(requester.threadTs ? { thread_ts: requester.threadTs } : {}),
          text: prompt,
        }),
      );
      return delivery.startRun({
        prompt: [
          `Slack user ${requester.user} asked you something in channel ${requester.channel}: their message is the \`text\` of ${EVENT_PAYLOAD_FILE}. Do what it asks.`,
          'Your final answer is posted in their Slack thread; commit any change and the platform pushes it.',
        ].join('\n'),
        title: `Slack: ${prompt.split('\n')[0] ?? ''}`,
        config: environment,
        metadata: slackRequesterMetadata(app, requester),
        payload: request,
        source: 'SLACK',
      });
    },
  );
