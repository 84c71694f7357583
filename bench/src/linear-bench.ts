import { randomUUID } from 'node:crypto';
import { linearIssueAssigned, startScriptedLinear } from '@conveyor/testing';
import { signWebhook } from '@conveyor/webhook-auth';
import { apiPost, printJson, startBenchPlatform } from './bench-platform';
import { inProgressOrLater, measureIntegration, runOfDelivery, runState } from './integration-latency';

/**
 * Time from a Linear webhook (an issue assigned to the agent's user) to its run in progress (through the API) and to
 * the outcome comment on the scripted Linear GraphQL API (which checks the key as Linear does). Deliveries are signed
 * as Linear signs them (HMAC and webhookTimestamp) and sent one after another, each waiting for its comment; each is
 * compared with a run created through the API reaching the same stage (integration-latency.ts).
 */
const DELIVERIES = Number(process.env.BENCH_DELIVERIES ?? 20);
const AGENT = { id: 'user-bench-agent', name: 'conveyor' };

async function main(): Promise<void> {
  const apiKey = `lin_api_${randomUUID().replace(/-/g, '')}`;
  const linear = await startScriptedLinear({ apiKey, viewer: AGENT });
  const platform = await startBenchPlatform(
    {
      LINEAR_API_URL: linear.url,
      EGRESS_ALLOWED_ADDRESSES: new URL(linear.url).host,
      LINEAR_RUNS_PER_HOUR: '100000',
    },
    { withRunner: true },
  );
  try {
    const factory = await apiPost(platform, '/factories', { name: 'bench' });
    const secret = `lin_wh_${randomUUID().replace(/-/g, '')}`;
    const integration = await apiPost(platform, '/integrations/linear', {
      name: 'bench',
      factory_id: factory.factory_id,
      api_key: apiKey,
      webhook_secret: secret,
    });
    const webhook = { factory_id: factory.factory_id!, webhook_uid: integration.webhook_uid! };
    const result = await measureIntegration({
      benchmark: 'linear-assignment-to-comment',
      platform,
      count: DELIVERIES,
      baselineStages: ['in_progress', 'ended'],
      trialAt: (i) => {
        const issueId = `issue-${randomUUID()}`;
        const deliveryId = randomUUID();
        const at = Date.now();
        const body = JSON.stringify(
          linearIssueAssigned({
            issueId,
            number: i,
            title: `Bench ${i}`,
            assigneeId: AGENT.id,
            webhookId: 'webhook-bench',
            at,
          }),
        );
        let runId: string | undefined;
        return {
          request: {
            url: integration.webhook_url!,
            body,
            headers: {
              ...signWebhook('linear', { secret, body, now: new Date(at) }),
              'linear-event': 'Issue',
              'linear-delivery': deliveryId,
              'content-type': 'application/json',
            },
          },
          expectStatus: 202,
          milestones: [
            {
              name: 'run_in_progress',
              baseline: 'in_progress',
              reached: async () =>
                !!(runId ??= await runOfDelivery(platform, webhook, deliveryId)) &&
                inProgressOrLater(await runState(platform, runId)),
            },
            {
              name: 'outcome_comment',
              baseline: 'ended',
              reached: () => (linear.comments.get(issueId) ?? []).length > 0,
            },
          ],
        };
      },
    });
    printJson(result);
  } finally {
    await platform.stop();
    await linear.close();
  }
}

void main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
