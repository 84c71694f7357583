import type { PrismaClient } from '@conveyor/db';

/** A run's model usage; token counts are decimal strings (int64 on the wire), the cost absent when none was reported. */
export interface RunUsage {
  input_tokens: string;
  output_tokens: string;
  total_tokens: string;
  inference_cost_usd?: number;
}

interface UsageRow {
  runId: string;
  input: bigint | null;
  output: bigint | null;
  cost: number | null;
}

/**
 * `request_usage` of runs: the totals of their `usage` events (tokens in and out, inference cost), summed in one
 * query per page. Runs whose harness reported no usage are absent from the map, so the API omits the key.
 */
export async function usageByRun(db: PrismaClient, runIds: string[]): Promise<Map<string, RunUsage>> {
  if (runIds.length === 0) return new Map();
  const rows = await db.$queryRaw<UsageRow[]>`
    SELECT "runId"::text AS "runId",
           SUM(COALESCE((data->>'input_tokens')::bigint, 0))::bigint AS input,
           SUM(COALESCE((data->>'output_tokens')::bigint, 0))::bigint AS output,
           SUM((data->>'cost_usd')::float8) AS cost
      FROM "RunEvent"
     WHERE "runId" = ANY(${runIds}::uuid[]) AND kind = 'usage'
     GROUP BY "runId"`;
  return new Map(
    rows.map((row) => {
      const input = row.input ?? 0n;
      const output = row.output ?? 0n;
      const usage: RunUsage = {
        input_tokens: input.toString(),
        output_tokens: output.toString(),
        total_tokens: (input + output).toString(),
      };
      if (row.cost !== null) usage.inference_cost_usd = row.cost;
      return [row.runId, usage];
    }),
  );
}
