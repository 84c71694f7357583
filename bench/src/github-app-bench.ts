import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { git, seedRemote, startGitHttpServer, startPlatform, startScriptedGitHub } from '@conveyor/testing';
import { signWebhook } from '@conveyor/webhook-auth';
import { apiPost, printJson, progress } from './bench-platform';

/**
 * Time from a GitHub delivery (an issue assigned to the App's bot) to its check run showing "in progress" on the
 * scripted GitHub: the ingress, Kafka, the delivery consumer, the run's queued check (an installation token and three
 * GitHub calls), the queue, a runner's claim and the PATCH. Deliveries are sent one after another, each waiting for
 * its check, so the numbers are latencies, not throughput. Goal (issue 37): p50 ≤ 2 s.
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
  const platform = await startPlatform({
    env: {
      LOG_LEVEL: 'warn',
      RUN_SANDBOX: 'none',
      GIT_ALLOWED_SCHEMES: 'https,http',
      EGRESS_ALLOWED_ADDRESSES: `${new URL(http.url).host},${new URL(github.url).host}`,
      GITHUB_API_URL: github.url,
    },
  });
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
    const latencies: number[] = [];
    for (let i = 1; i <= DELIVERIES; i++) {
      const body = JSON.stringify({
        action: 'assigned',
        issue: { number: i, title: `Bench ${i}`, html_url: `https://github.test/i/${i}` },
        assignee: { login: 'bench[bot]' },
        sender: { login: 'octocat' },
        repository: { full_name: 'acme/widgets', clone_url: `${http.url}/acme/widgets.git` },
        installation: { id: 1 },
      });
      const checks = github.checkRuns.size;
      const started = performance.now();
      const res = await fetch(app.webhook_url!, {
        method: 'POST',
        body,
        headers: {
          ...signWebhook('github', { secret, body, now: new Date() }),
          'x-github-delivery': randomUUID(),
          'x-github-event': 'issues',
        },
      });
      if (res.status !== 202) throw new Error(`delivery ${i}: ${res.status} ${await res.text()}`);
      const inProgress = () =>
        [...github.checkRuns.entries()].some(([id, c]) => id > checks && c.statuses.includes('in_progress'));
      while (!inProgress()) {
        if (performance.now() - started > 60_000)
          throw new Error(`delivery ${i}: no check in progress after 60 s`);
        await new Promise((r) => setTimeout(r, 2));
      }
      latencies.push(performance.now() - started);
      progress(`delivery ${i}: ${latencies.at(-1)!.toFixed(0)} ms`);
    }
    const sorted = [...latencies].sort((a, b) => a - b);
    const at = (q: number) => Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!);
    printJson({
      benchmark: 'github-app-delivery-to-check-in-progress',
      deliveries: DELIVERIES,
      p50_ms: at(0.5),
      p90_ms: at(0.9),
      max_ms: Math.round(sorted.at(-1)!),
      goal_p50_ms: 2000,
    });
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
