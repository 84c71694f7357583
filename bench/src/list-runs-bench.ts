// ListRuns benchmark: generates BENCH_RUNS runs (default 1,000,000) in a dedicated database, then measures
// p50/p99 latency of ListRuns for each filter and sort against a baseline measured in the same run (the
// unfiltered first page), reported as ratios, and EXPLAINs each page query to prove index usage (a Seq Scan on
// "Run" is flagged). JSON result on stdout; progress and plans on stderr. See bench/README.md.
import { performance } from 'node:perf_hooks';
import { createPrismaClient, Prisma, type PrismaClient } from '@conveyor/db';
import { chooseArtifactStrategy, listRuns, pageQuery, parseRunListRequest } from '@conveyor/orchestrator';
import { listRunsRequest, type Caller__Output, type ListRunsRequest__Output } from '@conveyor/proto';
import { createTestDatabase } from '@conveyor/testing';

const RUNS = Number(process.env.BENCH_RUNS ?? 1_000_000);
const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 50);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 5);
const KEEP = process.env.BENCH_KEEP_DATABASE === '1';

const TEAM = 'team_bench';
const caller: Caller__Output = {
  team_id: TEAM,
  principal_type: 'USER',
  principal_id: 'user_1',
  role: 'ADMIN',
  api_key_id: '',
  run_id: '',
  display_name: '',
  email: '',
};

const log = (...args: unknown[]) => console.error(...args);

const request = (overrides: Partial<ListRunsRequest__Output>): ListRunsRequest__Output =>
  listRunsRequest({ caller, ...overrides });

/** Pseudo-random but deterministic per row: hashint4 of the row number and a salt. */
const h = (salt: number) => `(hashint4(g + ${salt * 1_000_003}) & 2147483647)`;

async function generate(
  db: PrismaClient,
): Promise<{ generateMs: number; indexMs: number; analyzeMs: number }> {
  await db.$executeRawUnsafe(
    `INSERT INTO "Team" (id, name) VALUES ('${TEAM}', 'Bench'), ('team_other', 'Other')`,
  );
  // Secondary indexes are dropped for the bulk insert and rebuilt afterwards (much faster than maintaining them).
  const indexes = await db.$queryRawUnsafe<{ indexname: string; indexdef: string }[]>(
    `SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema() AND tablename IN ('Run', 'Artifact') AND indexname NOT LIKE '%\\_pkey'`,
  );
  for (const index of indexes) await db.$executeRawUnsafe(`DROP INDEX "${index.indexname}"`);

  const started = performance.now();
  await db.$executeRawUnsafe(`
    INSERT INTO "Run" (id, "teamId", title, prompt, state, source, "executionLocation", "creatorType", "creatorId", "executorType", "executorId",
      "configName", "modelId", "environmentId", "skillSpec", "scheduleId", "scheduleName", "scheduleCron", "parentRunId", "ancestorIds",
      metadata, "conversationId", "sessionId", "createdAt", "updatedAt")
    SELECT
      md5('run' || g)::uuid,
      CASE WHEN g % 100 = 0 THEN 'team_other' ELSE '${TEAM}' END,
      (ARRAY['Fix','Deploy','Update','Refactor','Test','Triage','Bump','Investigate'])[1 + ${h(1)} % 8] || ' ' ||
        (ARRAY['payments','auth','billing','search','checkout','notifications','reports','gateway','scheduler','importer'])[1 + ${h(2)} % 10] || ' ' ||
        (ARRAY['service','tests','docs','flake','dependency','migration','pipeline'])[1 + ${h(3)} % 7] || ' #' || g,
      'Please look into the ' || (ARRAY['failing','slow','flaky','outdated','broken','noisy'])[1 + ${h(4)} % 6] || ' ' ||
        (ARRAY['payments','auth','billing','search','checkout','notifications','reports','gateway','scheduler','importer'])[1 + ${h(5)} % 10] ||
        ' module, reproduce it locally, write a regression test and open a pull request. Context: ' || md5(g::text) || ' ' || md5((g * 7)::text),
      (CASE WHEN g % 50 = 0 THEN 'QUEUED' WHEN g % 50 = 1 THEN 'PENDING' WHEN g % 50 = 2 THEN 'CLAIMED' WHEN g % 50 IN (3, 4) THEN 'INPROGRESS'
            WHEN g % 50 BETWEEN 5 AND 9 THEN 'FAILED' WHEN g % 50 = 10 THEN 'ERROR' WHEN g % 50 = 11 THEN 'BLOCKED'
            WHEN g % 50 IN (12, 13) THEN 'CANCELLED' ELSE 'SUCCEEDED' END)::"RunState",
      CASE WHEN g % 10 = 1 THEN 'SCHEDULED_AGENT' WHEN g % 10 = 5 THEN 'ORCHESTRATION' WHEN g % 50 = 2 THEN 'LINEAR' WHEN g % 25 = 4 THEN 'SLACK' ELSE 'API' END,
      CASE WHEN g % 20 = 7 THEN 'LOCAL' ELSE 'REMOTE' END,
      'USER', 'user_' || ${h(6)} % 50,
      CASE WHEN g % 4 = 0 THEN 'AGENT' ELSE 'USER' END::"PrincipalType",
      CASE WHEN g % 4 = 0 THEN 'agent_' || ${h(7)} % 20 ELSE 'user_' || ${h(6)} % 50 END,
      CASE WHEN g % 2 = 0 THEN 'config_' || ${h(8)} % 100 END,
      (ARRAY['claude-4','gpt-5','gemini-3','o4','llama-5','mistral-large'])[1 + ${h(9)} % 6],
      CASE WHEN ${h(10)} % 10 < 3 THEN NULL ELSE substr(md5('env' || ${h(11)} % 200), 1, 22) END,
      CASE WHEN ${h(12)} % 2 = 0 THEN NULL ELSE 'acme/repo' || ${h(13)} % 20 || ':.claude/skills/skill' || ${h(14)} % 300 || '/SKILL.md' END,
      CASE WHEN g % 10 = 1 THEN 'sched_' || (g / 10) % 500 END,
      CASE WHEN g % 10 = 1 THEN 'nightly ' || (g / 10) % 500 END,
      CASE WHEN g % 10 = 1 THEN '0 3 * * *' END,
      CASE WHEN g % 10 = 5 AND g > 1000 THEN md5('run' || (1 + g % 997))::uuid END,
      CASE WHEN g % 10 = 5 AND g > 1000 THEN ARRAY[md5('run' || (1 + g % 997))::uuid::text] ELSE ARRAY[]::text[] END,
      jsonb_build_object('ticket_id', 'T-' || ${h(15)} % 20000,
                         'team', (ARRAY['payments','auth','billing','search','checkout','growth','infra','mobile','web','data'])[1 + ${h(16)} % 10])
        || CASE WHEN g % 20 = 0 THEN jsonb_build_object('automation_id', 'auto_' || (g / 20) % 50) ELSE '{}'::jsonb END,
      gen_random_uuid(), gen_random_uuid(),
      timestamptz '2025-01-01T00:00:00Z' + g * (interval '1 second' * ${Math.max(1, Math.floor(30_000_000 / RUNS))}),
      timestamptz '2025-01-01T00:00:00Z' + g * (interval '1 second' * ${Math.max(1, Math.floor(30_000_000 / RUNS))}) + (${h(17)} % 7200) * interval '1 second'
    FROM generate_series(1, ${RUNS}) AS g`);
  await db.$executeRawUnsafe(`
    INSERT INTO "Artifact" (id, "runId", type, data, "createdAt")
    SELECT md5('artifact' || g)::uuid, md5('run' || g)::uuid,
      CASE WHEN g % 1000 = 7 THEN 'SCREENSHOT' WHEN g % 20 = 3 THEN 'PULL_REQUEST' ELSE 'PLAN' END,
      jsonb_build_object('url', 'https://github.com/acme/repo/pull/' || g, 'branch', 'fix-' || g),
      timestamptz '2025-01-01T00:00:00Z' + g * interval '1 second'
    FROM generate_series(1, ${RUNS}) AS g WHERE g % 10 = 3 OR g % 1000 = 7`);
  const generateMs = performance.now() - started;

  const indexStarted = performance.now();
  await db.$executeRawUnsafe(`SET maintenance_work_mem = '512MB'`);
  for (const index of indexes) {
    const t = performance.now();
    await db.$executeRawUnsafe(index.indexdef);
    log(`  index ${index.indexname}: ${Math.round(performance.now() - t)} ms`);
  }
  const indexMs = performance.now() - indexStarted;
  const analyzeStarted = performance.now();
  await db.$executeRawUnsafe(`VACUUM ANALYZE "Run"`);
  await db.$executeRawUnsafe(`VACUUM ANALYZE "Artifact"`);
  return { generateMs, indexMs, analyzeMs: performance.now() - analyzeStarted };
}

interface Scenario {
  name: string;
  params: Partial<ListRunsRequest__Output>;
}

const ANCESTOR = '00000000-0000-0000-0000-000000000000'; // replaced by md5('run42') below

function scenarios(ancestor: string, cursor: string): Scenario[] {
  const day = new Date(
    Date.parse('2025-01-01T00:00:00Z') +
      Math.floor(RUNS * Math.max(1, Math.floor(30_000_000 / RUNS)) * 1000 * 0.5),
  );
  return [
    { name: 'second page (cursor)', params: { cursor } },
    { name: 'limit=100', params: { limit: 100 } },
    { name: 'sort updated_at asc', params: { sort_order: 'asc' } },
    { name: 'sort created_at desc', params: { sort_by: 'created_at' } },
    { name: 'sort created_at asc', params: { sort_by: 'created_at', sort_order: 'asc' } },
    { name: 'sort title asc', params: { sort_by: 'title', sort_order: 'asc' } },
    { name: 'sort title desc', params: { sort_by: 'title' } },
    { name: 'sort agent asc', params: { sort_by: 'agent', sort_order: 'asc' } },
    { name: 'sort agent desc', params: { sort_by: 'agent' } },
    { name: 'state=QUEUED (2%)', params: { states: ['QUEUED'] } },
    { name: 'state=QUEUED|INPROGRESS', params: { states: ['QUEUED', 'INPROGRESS'] } },
    { name: 'state=SUCCEEDED (72%)', params: { states: ['SUCCEEDED'] } },
    { name: 'name (config, 0.5%)', params: { name: 'config_7' } },
    { name: 'model_id (17%)', params: { model_id: 'gpt-5' } },
    { name: 'creator (2%)', params: { creator: 'user_7' } },
    { name: 'executor (agent, 1%)', params: { executor: 'agent_3' } },
    { name: 'source=LINEAR (2%)', params: { source: 'LINEAR' } },
    { name: 'execution_location=LOCAL (5%)', params: { execution_location: 'LOCAL' } },
    { name: 'created_after (last half)', params: { created_after: day.toISOString() } },
    { name: 'created_before (first half)', params: { created_before: day.toISOString() } },
    {
      name: 'created_before + sort created_at',
      params: { created_before: day.toISOString(), sort_by: 'created_at' },
    },
    {
      name: 'created_after+before (1 hour)',
      params: {
        created_after: day.toISOString(),
        created_before: new Date(day.getTime() + 3600_000).toISOString(),
      },
    },
    { name: 'updated_after (last half)', params: { updated_after: day.toISOString() } },
    { name: 'environment_id (0.35%)', params: { environment_id: 'ENV' } },
    { name: 'environment_id=empty-environment (30%)', params: { environment_id: 'empty-environment' } },
    { name: 'skill_spec (0.17%)', params: { skill_spec: 'acme/repo3:.claude/skills/skill42/SKILL.md' } },
    { name: 'schedule_id (0.02%)', params: { schedule_id: 'sched_42' } },
    { name: 'ancestor_run_id (0.01%)', params: { ancestor_run_id: ancestor } },
    { name: 'metadata 1 pair (ticket, 0.005%)', params: { metadata: { ticket_id: 'T-4242' } } },
    { name: 'metadata 1 pair (team, 10%)', params: { metadata: { team: 'payments' } } },
    { name: 'metadata 2 pairs', params: { metadata: { team: 'payments', ticket_id: 'T-4242' } } },
    { name: 'automation_id (0.1%)', params: { automation_id: 'auto_7' } },
    { name: 'artifact_type=PLAN (5%)', params: { artifact_type: 'PLAN' } },
    { name: 'artifact_type=SCREENSHOT (0.1%)', params: { artifact_type: 'SCREENSHOT' } },
    { name: 'q common word (10%)', params: { q: 'payments' } },
    { name: 'q two words', params: { q: 'flaky checkout' } },
    { name: 'q rare token', params: { q: '#4242' } },
    { name: 'q no match', params: { q: 'zzqqxxyy' } },
    { name: 'q + sort title', params: { q: 'checkout migration', sort_by: 'title', sort_order: 'asc' } },
    {
      name: 'combined: state+model+metadata',
      params: { states: ['FAILED'], model_id: 'claude-4', metadata: { team: 'infra' } },
    },
    {
      name: 'combined: source+created_after+sort agent',
      params: { source: 'API', created_after: day.toISOString(), sort_by: 'agent', sort_order: 'asc' },
    },
  ];
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;
}

async function measure(
  db: PrismaClient,
  params: Partial<ListRunsRequest__Output>,
): Promise<{ p50: number; p99: number; mean: number; rows: number }> {
  let rows = 0;
  for (let i = 0; i < WARMUP; i++) rows = (await listRuns(db, caller, request(params))).runs?.length ?? 0;
  const samples: number[] = [];
  for (let i = 0; i < ITERATIONS; i++) {
    const t = performance.now();
    await listRuns(db, caller, request(params));
    samples.push(performance.now() - t);
  }
  samples.sort((a, b) => a - b);
  return {
    p50: percentile(samples, 0.5),
    p99: percentile(samples, 0.99),
    mean: samples.reduce((a, b) => a + b, 0) / samples.length,
    rows,
  };
}

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}

function walk(node: PlanNode, out: PlanNode[] = []): PlanNode[] {
  out.push(node);
  for (const child of node.Plans ?? []) walk(child, out);
  return out;
}

/** EXPLAIN ANALYZE of the exact page queries ListRuns runs for these params (both sections of the agent sort). */
async function explain(db: PrismaClient, params: Partial<ListRunsRequest__Output>) {
  const query = parseRunListRequest(request(params));
  const sections = query.sortBy === 'agent' ? (['skill', 'none'] as const) : ([undefined] as const);
  const artifactStrategy = await chooseArtifactStrategy(db, query);
  const result = {
    seqScanOnRun: false,
    indexes: new Set<string>(),
    nodes: new Set<string>(),
    text: [] as string[],
  };
  for (const section of sections) {
    const sql = pageQuery({
      teamId: TEAM,
      filters: query.filters,
      sortBy: query.sortBy,
      sortOrder: query.sortOrder,
      cursor: query.cursor,
      take: query.limit + 1,
      section,
      artifactStrategy,
    });
    const [row] = await db.$queryRaw<{ 'QUERY PLAN': [{ Plan: PlanNode }] }[]>(
      Prisma.sql`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`,
    );
    for (const node of walk(row!['QUERY PLAN'][0].Plan)) {
      result.nodes.add(node['Node Type']);
      if (node['Index Name']) result.indexes.add(node['Index Name']);
      if (node['Node Type'] === 'Seq Scan' && node['Relation Name'] === 'Run') result.seqScanOnRun = true;
    }
    const text = await db.$queryRaw<{ 'QUERY PLAN': string }[]>(Prisma.sql`EXPLAIN (COSTS OFF) ${sql}`);
    result.text.push(...(section ? [`-- section: ${section}`] : []), ...text.map((t) => t['QUERY PLAN']));
  }
  return {
    seqScanOnRun: result.seqScanOnRun,
    indexes: [...result.indexes],
    nodes: [...result.nodes],
    text: result.text,
  };
}

async function main(): Promise<void> {
  const database = await createTestDatabase();
  const db = createPrismaClient(database.url);
  log(`database ${database.name}: generating ${RUNS.toLocaleString('en')} runs`);
  try {
    const setup = await generate(db);
    log(
      `generated in ${Math.round(setup.generateMs)} ms, indexes in ${Math.round(setup.indexMs)} ms, analyzed in ${Math.round(setup.analyzeMs)} ms`,
    );
    const [counts] = await db.$queryRawUnsafe<{ runs: bigint; team: bigint; artifacts: bigint }[]>(
      `SELECT (SELECT count(*) FROM "Run") AS runs, (SELECT count(*) FROM "Run" WHERE "teamId" = '${TEAM}') AS team, (SELECT count(*) FROM "Artifact") AS artifacts`,
    );
    const env = await db.$queryRawUnsafe<{ environmentId: string }[]>(
      `SELECT "environmentId" FROM "Run" WHERE "teamId" = '${TEAM}' AND "environmentId" IS NOT NULL LIMIT 1`,
    );
    const ancestor = (await db.$queryRawUnsafe<{ id: string }[]>(`SELECT md5('run42')::uuid::text AS id`))[0]!
      .id;

    // The baseline is measured before and after the scenarios (cold and warm caches, changing machine load);
    // ratios use the faster of the two, so they are never flattered by a slow baseline.
    const baselineBefore = await measure(db, {});
    const firstPage = await listRuns(db, caller, request({}));
    log(`baseline before: p50 ${baselineBefore.p50.toFixed(2)} ms, p99 ${baselineBefore.p99.toFixed(2)} ms`);
    const measured = [];
    for (const scenario of scenarios(ancestor || ANCESTOR, firstPage.next_cursor ?? '')) {
      const params = { ...scenario.params };
      if (params.environment_id === 'ENV') params.environment_id = env[0]?.environmentId ?? '';
      const timing = await measure(db, params);
      const plan = await explain(db, params);
      const flag = plan.seqScanOnRun ? '  <-- SEQ SCAN ON "Run"' : '';
      log(
        `\n## ${scenario.name}: p50 ${timing.p50.toFixed(2)} ms, p99 ${timing.p99.toFixed(2)} ms, ${timing.rows} rows${flag}`,
      );
      for (const line of plan.text) log(`   ${line}`);
      measured.push({ scenario, params, timing, plan });
    }
    const baselineAfter = await measure(db, {});
    log(`\nbaseline after: p50 ${baselineAfter.p50.toFixed(2)} ms, p99 ${baselineAfter.p99.toFixed(2)} ms`);
    const baseline = baselineAfter.p50 < baselineBefore.p50 ? baselineAfter : baselineBefore;
    const results = measured.map(({ scenario, params, timing, plan }) => ({
      name: scenario.name,
      params,
      rows: timing.rows,
      p50_ms: round(timing.p50),
      p99_ms: round(timing.p99),
      mean_ms: round(timing.mean),
      p50_ratio: round(timing.p50 / baseline.p50),
      p99_ratio: round(timing.p99 / baseline.p99),
      seq_scan_on_run: plan.seqScanOnRun,
      indexes: plan.indexes,
      plan_nodes: plan.nodes,
    }));
    log('\nscenario                                      p50 ratio  p99 ratio');
    for (const r of results)
      log(`${r.name.padEnd(46)} ${String(r.p50_ratio).padStart(9)} ${String(r.p99_ratio).padStart(10)}`);
    const flagged = results.filter((r) => r.seq_scan_on_run).map((r) => r.name);
    process.stdout.write(
      `${JSON.stringify(
        {
          benchmark: 'ListRuns',
          runs: Number(counts!.runs),
          runs_in_listed_team: Number(counts!.team),
          artifacts: Number(counts!.artifacts),
          iterations: ITERATIONS,
          setup_ms: {
            generate: round(setup.generateMs),
            indexes: round(setup.indexMs),
            analyze: round(setup.analyzeMs),
          },
          baseline: {
            name: 'unfiltered first page (updated_at desc, limit 20), the faster of before/after',
            p50_ms: round(baseline.p50),
            p99_ms: round(baseline.p99),
            mean_ms: round(baseline.mean),
            before: { p50_ms: round(baselineBefore.p50), p99_ms: round(baselineBefore.p99) },
            after: { p50_ms: round(baselineAfter.p50), p99_ms: round(baselineAfter.p99) },
          },
          scenarios: results,
          flagged_seq_scans: flagged,
        },
        null,
        2,
      )}\n`,
    );
    if (flagged.length > 0) process.exitCode = 2;
  } finally {
    await db.$disconnect();
    if (KEEP) log(`kept database ${database.url}`);
    else await database.drop();
  }
}

const round = (n: number): number => Math.round(n * 100) / 100;

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
