import { readFileSync } from 'node:fs';
import path from 'node:path';
import { startPrometheus, type RunningPrometheus } from '@conveyor/testing';
import { startPlatform, type RunningPlatform } from './platform';
import { eventually } from './run-waits';

const DEPLOY = path.resolve(__dirname, '../../../deploy/observability');
const SERVICES = ['gateway', 'ingress', 'orchestrator', 'runner'];

interface Sample {
  metric: Record<string, string>;
  value: [number, string];
}

/** Metric names an expression reads, from Prometheus's own parser (GET /api/v1/parse_query). */
async function metricNames(prometheus: RunningPrometheus, expr: string): Promise<string[]> {
  const names: string[] = [];
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(walk);
    if (!node || typeof node !== 'object') return;
    const n = node as Record<string, unknown>;
    if ((n.type === 'vectorSelector' || n.type === 'matrixSelector') && typeof n.name === 'string' && n.name)
      names.push(n.name);
    Object.values(n).forEach(walk);
  };
  walk(await prometheus.api(`parse_query?query=${encodeURIComponent(expr)}`));
  return names;
}

/**
 * A real Prometheus (built from the Go module proxy) scraping every service of a started platform, with the shipped
 * rules loaded: every target up, the rules evaluating without error, and every metric the Grafana dashboard and the
 * rules read exported by some service.
 */
describe('prometheus: scraping every service, the shipped rules and dashboard', () => {
  let platform: RunningPlatform;
  let prometheus: RunningPrometheus;

  beforeAll(async () => {
    platform = await startPlatform();
    const hostOf = (url: string) => new URL(url).host;
    prometheus = await startPrometheus({
      targets: [
        hostOf(platform.apiUrl),
        hostOf(platform.ingressUrl),
        hostOf(platform.orchestratorHttpUrl),
        hostOf(platform.runnerHttpUrl),
      ],
      ruleFiles: [path.join(DEPLOY, 'rules.yml')],
    });
  }, 180_000);

  afterAll(async () => {
    await prometheus?.stop();
    await platform?.stop();
  });

  const query = (expr: string) =>
    prometheus.api<{ result: Sample[] }>(`query?query=${encodeURIComponent(expr)}`).then((d) => d.result);

  const allTargetsUp = () =>
    eventually(
      async () => (await query('up{job="conveyor"} == 1')).length === 4,
      'all four targets up',
      platform,
      30_000,
    );

  it('scrapes all four services, each reporting its dependencies up', async () => {
    await allTargetsUp();
    const services = (await query('count by (service) (process_start_time_seconds)')).map(
      (s) => s.metric.service,
    );
    expect(services.sort()).toEqual(SERVICES);
    await eventually(
      async () => (await query('conveyor_dependency_up')).length > 0,
      'dependency_up scraped',
      platform,
      30_000,
    );
    const dependencies = await query('conveyor_dependency_up');
    expect(new Set(dependencies.map((s) => s.metric.service))).toEqual(new Set(SERVICES));
    expect(dependencies.filter((s) => s.value[1] !== '1')).toEqual([]);
    expect(await query('conveyor_run_queue_oldest_waiting_seconds')).toHaveLength(1);
  }, 60_000);

  it('evaluates every shipped rule without error', async () => {
    type Rules = { groups: Array<{ rules: Array<{ name: string; health: string; lastError?: string }> }> };
    let rules: Rules['groups'][number]['rules'] = [];
    await eventually(
      async () => {
        rules = (await prometheus.api<Rules>('rules')).groups.flatMap((g) => g.rules);
        return rules.length > 0 && rules.every((r) => r.health !== 'unknown');
      },
      'the rules evaluated',
      platform,
      30_000,
    );
    expect(rules.filter((r) => r.health !== 'ok')).toEqual([]);
  }, 60_000);

  it('exports every metric the dashboard and the rules read', async () => {
    await allTargetsUp();
    // Declared by the services' own /metrics (`# TYPE` lines), so a histogram nothing observed yet still counts.
    const exported = new Set(['up']);
    for (const url of [
      platform.apiUrl.replace(/\/v1$/, ''),
      platform.ingressUrl,
      platform.orchestratorHttpUrl,
      platform.runnerHttpUrl,
    ])
      for (const [, name, type] of (await (await fetch(`${url}/metrics`)).text()).matchAll(
        /^# TYPE (\S+) (\S+)$/gm,
      )) {
        exported.add(name!);
        if (type === 'histogram')
          for (const suffix of ['_bucket', '_count', '_sum']) exported.add(`${name}${suffix}`);
        if (type === 'summary') for (const suffix of ['_count', '_sum']) exported.add(`${name}${suffix}`);
      }
    const dashboard = JSON.parse(readFileSync(path.join(DEPLOY, 'grafana-dashboard.json'), 'utf8')) as {
      panels: Array<{ title: string; targets: Array<{ expr: string }> }>;
    };
    const missing: string[] = [];
    for (const panel of dashboard.panels)
      for (const target of panel.targets)
        // Grafana's interval variable is not PromQL; any range stands in for it.
        for (const name of await metricNames(prometheus, target.expr.replaceAll('$__rate_interval', '5m')))
          if (!exported.has(name)) missing.push(`${panel.title}: ${name}`);

    const rules = (
      await prometheus.api<{
        groups: Array<{ rules: Array<{ name: string; query: string; type: string }> }>;
      }>('rules')
    ).groups.flatMap((g) => g.rules);
    const recorded = new Set(rules.filter((r) => r.type === 'recording').map((r) => r.name));
    for (const rule of rules)
      for (const name of await metricNames(prometheus, rule.query))
        if (!exported.has(name) && !recorded.has(name)) missing.push(`rule ${rule.name}: ${name}`);
    expect(missing).toEqual([]);
    expect(dashboard.panels.length).toBeGreaterThan(10);
  }, 60_000);
});
