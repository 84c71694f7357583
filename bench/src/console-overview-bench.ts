import { createPrismaClient } from '@conveyor/db';
import { chromium } from 'playwright-core';
import { progress, startBenchPlatform } from './bench-platform';

/**
 * The console overview with BENCH_RUNS runs (default 10,000) of the dev team in the database: the first paint of
 * `/console/overview` and the time until its five charts are drawn, per cold page load (a new browser context each
 * time, so nothing is cached), and the latency of `GET /v1/insights` itself. JSON on stdout (bench/README.md).
 */
const RUNS = Number(process.env.BENCH_RUNS ?? 10_000);
const LOADS = Number(process.env.BENCH_ITERATIONS ?? 10);
const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** What the page-side functions below use of the browser. */
interface Browserish {
  document: { querySelectorAll(selector: string): { length: number } };
  performance: { now(): number; getEntriesByName(name: string): Array<{ startTime: number }> };
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!);
};
const summary = (values: number[]) => ({
  p50_ms: percentile(values, 50),
  p95_ms: percentile(values, 95),
  max_ms: Math.round(Math.max(...values)),
});

/** RUNS runs spread over the last 14 days, most ended (varied final states), each with one usage event. */
async function seed(databaseUrl: string): Promise<number> {
  const db = createPrismaClient(databaseUrl);
  const started = performance.now();
  try {
    await db.$executeRawUnsafe(`
      INSERT INTO "Run" (id, "teamId", title, prompt, state, "creatorId", "executorId", "modelId", "conversationId",
                         "sessionId", "createdAt", "startedAt", "endedAt", "updatedAt")
      SELECT md5('bench-run' || g)::uuid, 'team_dev', 'Bench run ' || g, 'Fix issue ' || g,
        (CASE WHEN g % 50 = 0 THEN 'QUEUED' WHEN g % 50 = 1 THEN 'INPROGRESS' WHEN g % 50 BETWEEN 2 AND 6 THEN 'FAILED'
              WHEN g % 50 = 7 THEN 'ERROR' WHEN g % 50 = 8 THEN 'CANCELLED' ELSE 'SUCCEEDED' END)::"RunState",
        'user_dev', 'user_dev', (ARRAY['claude-sonnet-4','gpt-5','gemini-3'])[1 + g % 3],
        gen_random_uuid(), gen_random_uuid(), t.created, t.created + (g % 40) * interval '1 second',
        t.created + (60 + g % 600) * interval '1 second', t.created + (60 + g % 600) * interval '1 second'
      FROM generate_series(1, ${RUNS}) AS g,
           LATERAL (SELECT now() - (g::float8 / ${RUNS}) * interval '14 days' AS created) AS t`);
    await db.$executeRawUnsafe(`
      INSERT INTO "RunEvent" ("runId", kind, data, "createdAt")
      SELECT md5('bench-run' || g)::uuid, 'usage',
        jsonb_build_object('input_tokens', 1000 + g % 5000, 'output_tokens', 200 + g % 900, 'cost_usd', (g % 100) / 1000.0),
        now() - (g::float8 / ${RUNS}) * interval '14 days'
      FROM generate_series(1, ${RUNS}) AS g`);
    await db.$executeRawUnsafe(`ANALYZE "Run"`);
    await db.$executeRawUnsafe(`ANALYZE "RunEvent"`);
  } finally {
    await db.$disconnect();
  }
  return performance.now() - started;
}

async function main(): Promise<void> {
  progress('starting the platform');
  const platform = await startBenchPlatform();
  const browser = await chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: ['--no-sandbox'],
  });
  try {
    progress(`seeding ${RUNS} runs`);
    const seedMs = await seed(platform.databaseUrl);
    const origin = new URL(platform.apiUrl).origin;

    const api: number[] = [];
    for (let i = 0; i < LOADS * 2; i++) {
      const t = performance.now();
      const res = await fetch(`${platform.apiUrl}/insights`, {
        headers: { authorization: `Bearer ${platform.apiKey}` },
      });
      if (res.status !== 200) throw new Error(`GET /insights: ${res.status} ${await res.text()}`);
      await res.arrayBuffer();
      api.push(performance.now() - t);
    }

    const firstPaint: number[] = [];
    const charts: number[] = [];
    for (let i = 0; i < LOADS; i++) {
      const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
      const page = await context.newPage();
      await page.goto(`${origin}/console/sign-in`);
      await page.fill('#api-key', platform.apiKey);
      await page.click('button[type=submit]');
      await page.getByRole('button', { name: 'Sign out' }).waitFor();
      // A cold load of the page itself: everything from navigation start.
      await page.goto(`${origin}/console/overview`, { waitUntil: 'commit' });
      // These run in the page (the console's CSP allows no string eval); this package compiles without the DOM types.
      await page.waitForFunction(
        () => (globalThis as unknown as Browserish).document.querySelectorAll('.chart canvas').length === 5,
        undefined,
        {
          timeout: 30_000,
          polling: 'raf',
        },
      );
      const timing = await page.evaluate(() => {
        const { performance } = globalThis as unknown as Browserish;
        return {
          fcp: performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? NaN,
          now: performance.now(),
        };
      });
      firstPaint.push(timing.fcp);
      charts.push(timing.now);
      await context.close();
      progress(
        `load ${i + 1}: first paint ${Math.round(timing.fcp)} ms, charts ${Math.round(timing.now)} ms`,
      );
    }

    process.stdout.write(
      `${JSON.stringify(
        {
          benchmark: 'console-overview',
          runs: RUNS,
          loads: LOADS,
          seed_ms: Math.round(seedMs),
          insights_api: summary(api),
          first_contentful_paint: summary(firstPaint),
          charts_drawn: summary(charts),
          under_one_second: percentile(firstPaint, 95) < 1000,
        },
        null,
        2,
      )}\n`,
    );
  } finally {
    await browser.close();
    await platform.stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
