import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { startToolProcess } from './observability-tools';
import { freePort } from './start-platform';

/** One span as Jaeger's query API returns it (GET /api/traces/:id), with its service resolved. */
export interface JaegerSpan {
  traceID: string;
  spanID: string;
  operationName: string;
  service: string;
  /** The span's parent in the same trace (its CHILD_OF reference), if any. */
  parentSpanID?: string;
  tags: Record<string, unknown>;
}

export interface RunningJaeger {
  /** Where services send OTLP over HTTP (OTEL_EXPORTER_OTLP_ENDPOINT). */
  otlpEndpoint: string;
  /** Traces with a span of `service` named `operation` (any, when empty) whose tags include `tags`, newest first. */
  findTraces(service: string, operation: string, tags: Record<string, string>): Promise<JaegerSpan[][]>;
  trace(traceId: string): Promise<JaegerSpan[]>;
  logs(): string;
  stop(): Promise<void>;
}

interface RawTrace {
  traceID: string;
  spans: Array<{
    traceID: string;
    spanID: string;
    operationName: string;
    processID: string;
    references?: Array<{ refType: string; traceID: string; spanID: string }>;
    tags?: Array<{ key: string; value: unknown }>;
  }>;
  processes: Record<string, { serviceName: string }>;
}

function spansOf(trace: RawTrace): JaegerSpan[] {
  return trace.spans.map((s) => ({
    traceID: s.traceID,
    spanID: s.spanID,
    operationName: s.operationName,
    service: trace.processes[s.processID]?.serviceName ?? '?',
    parentSpanID: s.references?.find((r) => r.refType === 'CHILD_OF' && r.traceID === s.traceID)?.spanID,
    tags: Object.fromEntries((s.tags ?? []).map((t) => [t.key, t.value])),
  }));
}

/** OTLP/HTTP in, in-memory storage, the query API out: nothing else of the default all-in-one configuration. */
const jaegerConfig = (otlp: number, query: number, queryGrpc: number): string => `service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces: { receivers: [otlp], processors: [batch], exporters: [jaeger_storage_exporter] }
  telemetry:
    metrics: { level: none }
    logs: { level: warn }
extensions:
  jaeger_storage:
    backends: { memstore: { memory: { max_traces: 10000 } } }
  jaeger_query:
    storage: { traces: memstore }
    http: { endpoint: "127.0.0.1:${query}" }
    grpc: { endpoint: "127.0.0.1:${queryGrpc}" }
receivers:
  otlp:
    protocols:
      http: { endpoint: "127.0.0.1:${otlp}" }
processors:
  batch: { timeout: 100ms }
exporters:
  jaeger_storage_exporter: { trace_storage: memstore }
`;

/** A real Jaeger v2 all-in-one (built from the Go module proxy) on loopback ports of its own. */
export async function startJaeger(): Promise<RunningJaeger> {
  const [otlp, query, queryGrpc] = await Promise.all([freePort(), freePort(), freePort()]);
  const queryUrl = `http://127.0.0.1:${query}`;
  const jaeger = await startToolProcess(
    'jaeger',
    async (dir) => {
      const config = path.join(dir, 'config.yaml');
      await writeFile(config, jaegerConfig(otlp, query, queryGrpc));
      return ['--config', config];
    },
    `${queryUrl}/api/services`,
  );
  const get = async (pathAndQuery: string): Promise<RawTrace[]> => {
    const res = await fetch(`${queryUrl}${pathAndQuery}`);
    if (res.status === 404) return [];
    if (!res.ok) throw new Error(`jaeger ${pathAndQuery}: ${res.status} ${await res.text()}`);
    return ((await res.json()) as { data: RawTrace[] | null }).data ?? [];
  };
  return {
    otlpEndpoint: `http://127.0.0.1:${otlp}`,
    findTraces: async (service, operation, tags) => {
      const params = new URLSearchParams({
        service,
        ...(operation ? { operation } : {}),
        tags: JSON.stringify(tags),
        lookback: '1h',
        limit: '20',
      });
      return (await get(`/api/traces?${params}`)).map(spansOf);
    },
    trace: async (traceId) => (await get(`/api/traces/${traceId}`)).flatMap(spansOf),
    logs: jaeger.logs,
    stop: jaeger.stop,
  };
}
