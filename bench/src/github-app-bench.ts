import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { git, seedRemote, startGitHttpServer, startScriptedGitHub } from '@conveyor/testing';
import { signWebhook } from '@conveyor/webhook-auth';
import { apiPost, printJson, startBenchPlatform } from './bench-platform';
import { measureIntegration } from './integration-latency';

/**
 * Time from a GitHub delivery (an issue assigned to the App's bot) to its check run showing "in progress" on the
 * scripted GitHub: the ingress, Kafka, the delivery consumer, the run's queued check (an installation token and three
 * GitHub calls), the queue, a runner's claim and the PATCH. Deliveries are sent one after another, each waiting for
 * its check, so the numbers are latencies, not throughput; each is compared with a run created through the API
 * reaching "in progress" (integration-latency.ts). Goal (issue 37): p50 ≤ 2 s.
 */
const DELIVERIES = Number(process.env.BENCH_DELIVERIES ?? 20);

async function main(): Promise<void> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'github-app-bench-'));
  seedRemote(root, 'acme/widgets');
  const http = await startGitHttpServer(root, () => true);
  const keys = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const github = await startScriptedGitHub({
    token: 'unused',
    branchExists: () => true,
    branchHead: () => git(['--git-dir', path.join(root, 'acme/widgets.git'), 'rev-parse', 'main']),
    app: { id: '1', slug: 'bench', publicKey: keys.publicKey, installations: [1] },
  });
  const platform = await startBenchPlatform(
    {
      GIT_ALLOWED_SCHEMES: 'https,http',
      EGRESS_ALLOWED_ADDRESSES: `${new URL(http.url).host},${new URL(github.url).host}`,
      GITHUB_API_URL: github.url,
      GITHUB_APP_RUNS_PER_HOUR: '100000',
    },
    { withRunner: true },
  );
  try {
    const factory = await apiPost(platform, '/factories', { name: 'bench' });
    const secret = `bench-secret-${randomUUID()}`;
    const app = await apiPost(platform, '/integrations/github-apps', {
      name: 'bench',
      factory_id: factory.factory_id,
      app_id: '1',
      private_key: keys.privateKey.export({ type: 'pkcs1', format: 'pem' }).toString(),
      webhook_secret: secret,
    });
    const result = await measureIntegration({
      benchmark: 'github-app-delivery-to-check-in-progress',
      platform,
      count: DELIVERIES,
      baselineStages: ['in_progress'],
      trialAt: (i) => {
        const body = JSON.stringify({
          action: 'assigned',
          issue: { number: i, title: `Bench ${i}`, html_url: `https://github.test/i/${i}` },
          assignee: { login: 'bench[bot]' },
          sender: { login: 'octocat' },
          repository: { full_name: 'acme/widgets', clone_url: `${http.url}/acme/widgets.git` },
          installation: { id: 1 },
        });
        const checks = github.checkRuns.size;
        return {
          request: {
            url: app.webhook_url!,
            body,
            headers: {
              ...signWebhook('github', { secret, body, now: new Date() }),
              'x-github-delivery': randomUUID(),
              'x-github-event': 'issues',
            },
          },
          expectStatus: 202,
          milestones: [
            {
              name: 'check_in_progress',
              baseline: 'in_progress',
              reached: () =>
                [...github.checkRuns.entries()].some(
                  ([id, c]) => id > checks && c.statuses.includes('in_progress'),
                ),
            },
          ],
        };
      },
    });
    printJson({ ...result, goal_p50_ms: 2000 });
  } finally {
    await platform.stop();
    await github.close();
    await http.close();
    await rm(root, { recursive: true, force: true });
  }
}

void main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
