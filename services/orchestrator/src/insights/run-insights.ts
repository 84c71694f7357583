import type { PrismaClient } from '@conveyor/db';
import type { Caller } from '../auth/caller';

export interface RunInsightsDeps {
  db: PrismaClient;
  /** Pool runners connected to the run queue now (installation-wide: they serve every team). */
  poolRunners: () => Promise<number>;
  /** A self-hosted worker not heard from for this long has no capacity (WORKER_STALE_AFTER_MS). */
  workerStaleAfterMs: number;
}

/** The overview's aggregates; token counts are decimal strings (int64 on the wire). */
export interface TeamInsights {
  generated_at: string;
  runs_per_hour: Array<{ hour: string; state: string; count: number }>;
  time_to_agent: Array<{ hour: string; p50_ms: number; p95_ms: number; runs: number }>;
  usage_per_day: Array<{
    day: string;
    model_id: string;
    input_tokens: string;
    output_tokens: string;
    cost_usd: number;
  }>;
  deliveries_per_minute: Array<{ minute: string; outcome: string; count: number }>;
  event_deliveries: { succeeded: number; failed: number; pending: number };
  capacity: {
    queued: number;
    running: number;
    pool_runners: number;
    workers: number;
    worker_capacity: number;
    worker_active_runs: number;
  };
}

export interface InsightWindows {
  hours: number;
  days: number;
  minutes: number;
}

/**
 * The console overview's aggregates (docs/console.md "Overview"), each one query over the caller's team only:
 * every statement filters on the team (directly, or through the webhook or endpoint it belongs to). Buckets are
 * UTC; empty buckets are left out (the chart fills them). Pool runners are the one installation-wide number: a
 * count of processes, nothing of another team.
 */
export async function runInsights(
  deps: RunInsightsDeps,
  caller: Caller,
  windows: InsightWindows,
  now = new Date(),
): Promise<TeamInsights> {
  const { db } = deps;
  const team = caller.team_id;
  const ago = (ms: number) => new Date(now.getTime() - ms);
  const sinceHours = ago(windows.hours * 3_600_000);
  const sinceDays = ago(windows.days * 86_400_000);
  const sinceMinutes = ago(windows.minutes * 60_000);
  const [perHour, toAgent, usage, deliveries, events, waiting, workers, poolRunners] = await Promise.all([
    db.$queryRaw<Array<{ hour: string; state: string; count: number }>>`
      SELECT to_char(date_trunc('hour', COALESCE("endedAt", "updatedAt") AT TIME ZONE 'UTC'), 'YYYY-MM-DD"T"HH24:00:00"Z"') AS hour,
              state::text AS state, COUNT(*)::int AS count
         FROM "Run"
        WHERE "teamId" = ${team} AND state IN ('SUCCEEDED', 'FAILED', 'ERROR', 'BLOCKED', 'CANCELLED')
          AND "updatedAt" >= ${sinceHours} AND COALESCE("endedAt", "updatedAt") >= ${sinceHours}
        GROUP BY 1, 2 ORDER BY 1, 2`,
    db.$queryRaw<Array<{ hour: string; p50: number; p95: number; runs: number }>>`
      SELECT to_char(date_trunc('hour', "createdAt" AT TIME ZONE 'UTC'), 'YYYY-MM-DD"T"HH24:00:00"Z"') AS hour,
              percentile_cont(0.5) WITHIN GROUP (ORDER BY EXTRACT(EPOCH FROM "startedAt" - "createdAt") * 1000) AS p50,
              percentile_cont(0.95) WITHIN GROUP (ORDER BY EXTRACT(EPOCH FROM "startedAt" - "createdAt") * 1000) AS p95,
              COUNT(*)::int AS runs
         FROM "Run"
        WHERE "teamId" = ${team} AND "createdAt" >= ${sinceHours} AND "startedAt" IS NOT NULL
        GROUP BY 1 ORDER BY 1`,
    db.$queryRaw<Array<{ day: string; model_id: string; input: bigint; output: bigint; cost: number }>>`
      SELECT to_char(date_trunc('day', r."createdAt" AT TIME ZONE 'UTC'), 'YYYY-MM-DD') AS day,
              COALESCE(r."modelId", '') AS model_id,
              SUM(COALESCE((e.data->>'input_tokens')::bigint, 0))::bigint AS input,
              SUM(COALESCE((e.data->>'output_tokens')::bigint, 0))::bigint AS output,
              COALESCE(SUM((e.data->>'cost_usd')::float8), 0)::float8 AS cost
         FROM "Run" r JOIN "RunEvent" e ON e."runId" = r.id AND e.kind = 'usage'
        WHERE r."teamId" = ${team} AND r."createdAt" >= ${sinceDays}
        GROUP BY 1, 2 ORDER BY 1, 2`,
    db.$queryRaw<Array<{ minute: string; outcome: string; count: number }>>`
      SELECT to_char(date_trunc('minute', d."receivedAt" AT TIME ZONE 'UTC'), 'YYYY-MM-DD"T"HH24:MI:00"Z"') AS minute,
              d.label AS outcome, COUNT(*)::int AS count
         FROM "WebhookDelivery" d JOIN "Webhook" w ON w.id = d."webhookId"
        WHERE w."teamId" = ${team} AND d."receivedAt" >= ${sinceMinutes}
        GROUP BY 1, 2 ORDER BY 1, 2`,
    db.$queryRaw<Array<{ status: string; count: number }>>`
      SELECT d.status, COUNT(*)::int AS count
         FROM "EventDelivery" d JOIN "EventEndpoint" e ON e.id = d."endpointId"
        WHERE e."teamId" = ${team} AND d."createdAt" >= ${sinceHours}
        GROUP BY 1`,
    db.run.groupBy({
      by: ['state'],
      where: { teamId: team, state: { in: ['QUEUED', 'PENDING', 'CLAIMED', 'INPROGRESS'] } },
      _count: { _all: true },
    }),
    db.workerConnection.findMany({
      where: { teamId: team, disconnectedAt: null, lastHeartbeatAt: { gt: ago(deps.workerStaleAfterMs) } },
      select: { capacity: true, activeRuns: true },
    }),
    deps.poolRunners(),
  ]);
  const inState = (...states: string[]) =>
    waiting.filter((w) => states.includes(w.state)).reduce((sum, w) => sum + w._count._all, 0);
  const eventsIn = (status: string) => events.find((e) => e.status === status)?.count ?? 0;
  return {
    generated_at: now.toISOString(),
    runs_per_hour: perHour,
    time_to_agent: toAgent.map((t) => ({ hour: t.hour, p50_ms: t.p50, p95_ms: t.p95, runs: t.runs })),
    usage_per_day: usage.map((u) => ({
      day: u.day,
      model_id: u.model_id,
      input_tokens: u.input.toString(),
      output_tokens: u.output.toString(),
      cost_usd: u.cost,
    })),
    deliveries_per_minute: deliveries,
    event_deliveries: {
      succeeded: eventsIn('succeeded'),
      failed: eventsIn('failed'),
      pending: eventsIn('pending'),
    },
    capacity: {
      queued: inState('QUEUED', 'PENDING'),
      running: inState('CLAIMED', 'INPROGRESS'),
      pool_runners: poolRunners,
      workers: workers.length,
      worker_capacity: workers.reduce((sum, w) => sum + w.capacity, 0),
      worker_active_runs: workers.reduce((sum, w) => sum + w.activeRuns, 0),
    },
  };
}
