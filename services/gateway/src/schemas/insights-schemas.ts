import { z } from './zod';

/** A window in whole units, from the query string: absent means the default, anything else must fit the bounds. */
const window = (max: number, fallback: number, unit: string) =>
  z.coerce
    .number()
    .int()
    .min(1)
    .max(max)
    .default(fallback)
    .describe(`${unit} back from now (1–${max}, default ${fallback})`);

export const insightsQuery = z
  .object({
    hours: window(168, 24, 'Hours'),
    days: window(90, 14, 'Days'),
    minutes: window(1440, 60, 'Minutes'),
  })
  .strict();

const count = z.number().int();

/** `GET /v1/insights` (docs/console.md "Overview"): the team's aggregates in UTC buckets; empty buckets omitted. */
export const insightsResponseSchema = z
  .object({
    generated_at: z.string(),
    runs_per_hour: z
      .array(z.object({ hour: z.string(), state: z.string(), count }))
      .describe('Runs that reached a final state, per hour they ended, by that state (`hours` window)'),
    time_to_agent: z
      .array(z.object({ hour: z.string(), p50_ms: z.number(), p95_ms: z.number(), runs: count }))
      .describe(
        'Creation to the agent starting, over the runs created in each hour that started (`hours` window)',
      ),
    usage_per_day: z
      .array(
        z.object({
          day: z.string(),
          model_id: z.string().describe('Empty when the runs named no model (the default model)'),
          input_tokens: count,
          output_tokens: count,
          cost_usd: z.number(),
        }),
      )
      .describe("Tokens and cost reported by the runs created each day, per the run's model (`days` window)"),
    deliveries_per_minute: z
      .array(z.object({ minute: z.string(), outcome: z.string(), count }))
      .describe('Webhook deliveries per minute received, by delivery-log label (`minutes` window)'),
    event_deliveries: z
      .object({
        succeeded: count,
        failed: count,
        pending: count,
        success_rate: z
          .number()
          .nullable()
          .describe('succeeded / (succeeded + failed); null when none ended'),
      })
      .describe('Outgoing run events to the team’s endpoints, created in the `hours` window, by status'),
    capacity: z
      .object({
        queued: count.describe('Team runs waiting for a runner (QUEUED, PENDING)'),
        running: count.describe('Team runs on a runner (CLAIMED, INPROGRESS)'),
        pool_runners: count.describe('Pool runners connected to the run queue (the installation’s, shared)'),
        workers: count.describe('The team’s connected self-hosted workers'),
        worker_capacity: count,
        worker_active_runs: count,
      })
      .describe('Now'),
  })
  .openapi('InsightsResponse');
