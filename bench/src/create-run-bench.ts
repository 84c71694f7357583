import { spawn } from 'node:child_process';
import path from 'node:path';
import { startPlatform } from '@conveyor/testing';
import { runLoad } from './load';

/**
 * Create-run throughput and latency through the real gateway → orchestrator → PostgreSQL (+ outbox → BullMQ),
 * against a bare express handler measured in the same run on the same machine, reported as ratios.
 * Env: BENCH_REQUESTS (default 2000), BENCH_CONCURRENCY (default 32). JSON on stdout, progress on stderr.
 */
async function main(): Promise<void> {
  const total = Number(process.env.BENCH_REQUESTS ?? 2000);
  const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 32);
  const body = JSON.stringify({ prompt: 'benchmark run', title: 'bench', metadata: { bench: 'create-run' } });

  // The baseline runs in its own process, like the gateway, so neither shares the load generator's event loop.
  const bare = spawn(process.execPath, [path.join(__dirname, 'bare-express-server.js')], { stdio: ['ignore', 'pipe', 'inherit'] });
  const barePort = await new Promise<number>((resolve, reject) => {
    bare.once('error', reject);
    bare.stdout.once('data', (d: Buffer) => resolve(Number(d.toString().trim())));
  });
  const bareUrl = `http://127.0.0.1:${barePort}/v1/agent/runs`;

  process.stderr.write('starting the platform (without a runner, so runs stay queued)…\n');
  // The measured load is far above an API key's default budget.
  const platform = await startPlatform({ env: { LOG_LEVEL: 'warn', RATE_LIMIT_PER_KEY_POINTS: String(10 * total), RATE_LIMIT_PER_TEAM_POINTS: String(10 * total) }, withRunner: false });
  try {
    const post = (url: string, key?: string) => async () => {
      const res = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json', ...(key ? { Authorization: `Bearer ${key}` } : {}) }, body });
      await res.arrayBuffer();
      return res.ok;
    };
    const gatewayUrl = `${platform.apiUrl}/agent/runs`;
    process.stderr.write('warming up…\n');
    await runLoad(200, concurrency, post(bareUrl));
    await runLoad(200, concurrency, post(gatewayUrl, platform.apiKey));
    process.stderr.write(`measuring baseline (${total} requests, concurrency ${concurrency})…\n`);
    const baseline = await runLoad(total, concurrency, post(bareUrl));
    process.stderr.write('measuring create-run through the gateway…\n');
    const gateway = await runLoad(total, concurrency, post(gatewayUrl, platform.apiKey));
    console.log(
      JSON.stringify(
        {
          benchmark: 'create-run',
          requests: total,
          concurrency,
          baseline: { name: 'bare express handler', ...baseline },
          gateway: { name: 'POST /v1/agent/runs (gateway → gRPC → PostgreSQL + outbox)', ...gateway },
          ratios: {
            throughput: Number((gateway.throughputPerSecond / baseline.throughputPerSecond).toFixed(3)),
            p50: Number((gateway.p50Ms / baseline.p50Ms).toFixed(2)),
            p99: Number((gateway.p99Ms / baseline.p99Ms).toFixed(2)),
          },
        },
        null,
        2,
      ),
    );
  } finally {
    bare.kill();
    await platform.stop();
  }
}

void main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
