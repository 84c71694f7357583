import { callerOf } from '../middleware/authenticate';
import { insightsQuery, insightsResponseSchema } from '../schemas/insights-schemas';
import { endpoint, json, type Endpoint } from './endpoint';

/** GET /v1/insights: the caller's team's aggregates over time, for the console's overview (docs/console.md). */
export const insightsEndpoints: Endpoint[] = [
  endpoint({
    method: 'get',
    path: '/insights',
    tag: 'Insights',
    summary: "The team's runs, usage, deliveries and capacity over time (the console's overview)",
    success: json(insightsResponseSchema, 'Aggregates in UTC buckets; empty buckets are left out.'),
    query: insightsQuery,
    handle: async ({ req, res, query, api }) => {
      const result = await api.call('runs', 'GetRunInsights', { caller: callerOf(req), ...query }, req.id);
      const events = result.event_deliveries ?? { succeeded: 0, failed: 0, pending: 0 };
      const ended = events.succeeded + events.failed;
      res.json({
        generated_at: result.generated_at,
        runs_per_hour: result.runs_per_hour,
        time_to_agent: result.time_to_agent,
        // int64 arrives as a decimal string; a day's tokens fit a double exactly.
        usage_per_day: result.usage_per_day.map((u) => ({
          ...u,
          input_tokens: Number(u.input_tokens),
          output_tokens: Number(u.output_tokens),
        })),
        deliveries_per_minute: result.deliveries_per_minute,
        event_deliveries: { ...events, success_rate: ended ? events.succeeded / ended : null },
        capacity: result.capacity,
      });
    },
  }),
];
