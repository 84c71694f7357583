import { useMemo } from 'preact/hooks';
import { alignSeries, bucketsUntil, TimeChart } from '../chart';
import { ErrorNote, Loading, useResource } from '../components';
import type { Insights } from '../types';

const HOURS = 24;
const DAYS = 14;
const MINUTES = 60;
const seconds = (iso: string) => Date.parse(iso) / 1000;

function Stat({ label, value, id }: { label: string; value: string | number; id: string }) {
  return (
    <div class="stat">
      <dt>{label}</dt>
      <dd id={id}>{value}</dd>
    </div>
  );
}

/** The charts of one `GET /insights` answer: buckets of each window, empty ones included. */
function useCharts(data: Insights | undefined) {
  return useMemo(() => {
    if (!data) return undefined;
    const now = seconds(data.generated_at);
    const hours = bucketsUntil(now, 3600, HOURS);
    const days = bucketsUntil(now, 86_400, DAYS);
    const minutes = bucketsUntil(now, 60, MINUTES);
    const model = (u: Insights['usage_per_day'][number]) => u.model_id || 'default model';
    const day = (u: Insights['usage_per_day'][number]) => seconds(`${u.day}T00:00:00Z`);
    const toAgent = (key: 'p50_ms' | 'p95_ms') =>
      alignSeries(
        data.time_to_agent,
        hours,
        (t) => seconds(t.hour),
        () => key.slice(0, 3),
        (t) => t[key] / 1000,
        null,
      );
    return {
      hours,
      days,
      minutes,
      runs: alignSeries(
        data.runs_per_hour,
        hours,
        (r) => seconds(r.hour),
        (r) => r.state,
        (r) => r.count,
      ),
      toAgent: [...toAgent('p50_ms'), ...toAgent('p95_ms')],
      cost: alignSeries(data.usage_per_day, days, day, model, (u) => u.cost_usd),
      tokens: alignSeries(data.usage_per_day, days, day, model, (u) => u.input_tokens + u.output_tokens),
      deliveries: alignSeries(
        data.deliveries_per_minute,
        minutes,
        (d) => seconds(d.minute),
        (d) => d.outcome,
        (d) => d.count,
      ),
    };
  }, [data]);
}

/**
 * The first page: what the team's platform did over time and what it has now, from `GET /insights` alone (one
 * request; docs/console.md "Overview").
 */
export function OverviewPage() {
  const { data, error, reload } = useResource<Insights>(
    `/insights?hours=${HOURS}&days=${DAYS}&minutes=${MINUTES}`,
  );
  const charts = useCharts(data);
  const rate = data?.event_deliveries.success_rate;
  return (
    <section aria-labelledby="overview-h" class="overview">
      <h1 id="overview-h">Overview</h1>
      <ErrorNote error={error} />
      {!data && !error && <Loading />}
      {data && charts && (
        <>
          <h2>Now</h2>
          <dl class="stats">
            <Stat id="stat-queued" label="Queued runs" value={data.capacity.queued} />
            <Stat id="stat-running" label="Running" value={data.capacity.running} />
            <Stat id="stat-pool" label="Pool runners" value={data.capacity.pool_runners} />
            <Stat
              id="stat-workers"
              label="Worker slots in use"
              value={`${data.capacity.worker_active_runs} / ${data.capacity.worker_capacity} (${data.capacity.workers} workers)`}
            />
            <Stat
              id="stat-event-rate"
              label={`Event deliveries OK (${HOURS} h)`}
              value={rate === null || rate === undefined ? '—' : `${(rate * 100).toFixed(1)} %`}
            />
          </dl>
          <button type="button" onClick={reload}>
            Refresh
          </button>
          <div class="charts">
            <TimeChart
              id="chart-runs"
              title={`Runs ended per hour by final state (${HOURS} h)`}
              times={charts.hours}
              series={charts.runs}
              unit="runs"
            />
            <TimeChart
              id="chart-agent"
              title={`Time to agent, p50 and p95 (${HOURS} h)`}
              times={charts.hours}
              series={charts.toAgent}
              unit="seconds"
            />
            <TimeChart
              id="chart-cost"
              title={`Cost per day by model (${DAYS} d)`}
              times={charts.days}
              series={charts.cost}
              unit="USD"
            />
            <TimeChart
              id="chart-tokens"
              title={`Tokens per day by model (${DAYS} d)`}
              times={charts.days}
              series={charts.tokens}
              unit="tokens"
            />
            <TimeChart
              id="chart-deliveries"
              title={`Webhook deliveries per minute by outcome (${MINUTES} min)`}
              times={charts.minutes}
              series={charts.deliveries}
              unit="deliveries"
            />
          </div>
        </>
      )}
    </section>
  );
}
