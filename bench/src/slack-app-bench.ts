import { randomUUID } from 'node:crypto';
import { startScriptedSlack } from '@conveyor/testing';
import { signWebhook } from '@conveyor/webhook-auth';
import { apiPost, printJson, startBenchPlatform } from './bench-platform';
import { measureIntegration } from './integration-latency';

/**
 * Time from a Slack mention of the app to its thread replies on the scripted Slack Web API (which checks the bot
 * token as Slack does): the first reply (the run queued), "Working on it…" (a runner claimed it) and the outcome.
 * Requests are signed as Slack signs them and sent one after another, each waiting for its outcome; each is compared
 * with a run created through the API reaching the same stage (integration-latency.ts).
 */
const DELIVERIES = Number(process.env.BENCH_DELIVERIES ?? 20);
const TEAM = 'T0BENCH';
const BOT = 'U0BENCH';

async function main(): Promise<void> {
  const token = `xoxb-bench-${randomUUID().replace(/-/g, '')}`;
  const slack = await startScriptedSlack({ token, teamId: TEAM, botUserId: BOT });
  const platform = await startBenchPlatform(
    { SLACK_API_URL: slack.url, SLACK_APP_RUNS_PER_HOUR: '100000' },
    { withRunner: true },
  );
  try {
    const factory = await apiPost(platform, '/factories', { name: 'bench' });
    const secret = `bench-signing-${randomUUID()}`;
    const app = await apiPost(platform, '/integrations/slack-apps', {
      name: 'bench',
      factory_id: factory.factory_id,
      signing_secret: secret,
      bot_token: token,
    });
    const inThread = (ts: string, match: (text: string) => boolean) => () =>
      slack.messages.some((m) => m.threadTs === ts && match(m.text));
    const result = await measureIntegration({
      benchmark: 'slack-app-mention-to-thread-replies',
      platform,
      count: DELIVERIES,
      baselineStages: ['in_progress', 'ended'],
      trialAt: (i) => {
        const ts = `${1_800_000_000 + i}.000200`;
        const body = JSON.stringify({
          type: 'event_callback',
          team_id: TEAM,
          api_app_id: 'A0BENCH',
          event_id: `Ev${randomUUID().replace(/-/g, '')}`,
          event: {
            type: 'app_mention',
            channel: 'C0BENCH',
            user: 'U0ALICE',
            text: `<@${BOT}> bench ${i}`,
            ts,
          },
        });
        return {
          request: {
            url: app.webhook_url!,
            body,
            headers: {
              'content-type': 'application/json',
              ...signWebhook('slack', { secret, body, now: new Date() }),
            },
          },
          expectStatus: 200,
          milestones: [
            { name: 'first_thread_reply', baseline: 'answered', reached: inThread(ts, () => true) },
            {
              name: 'working_reply',
              baseline: 'in_progress',
              reached: inThread(ts, (t) => t === 'Working on it…'),
            },
            {
              name: 'outcome_reply',
              baseline: 'ended',
              reached: inThread(ts, (t) => t.startsWith('Conveyor run')),
            },
          ],
        };
      },
    });
    printJson(result);
  } finally {
    await platform.stop();
    await slack.close();
  }
}

void main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
