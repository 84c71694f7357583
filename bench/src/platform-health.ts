/**
 * What happened to the platform's own Pods while run Pods burst (issue #36: 20 at once once lost the gateway's Service
 * with ECONNREFUSED): every second, how many of the gateway's endpoints were ready; afterwards, each platform Pod's
 * restarts and its last termination's reason, and the namespace's Warning events since the burst began (probe
 * failures, kills, evictions, preemptions), so a failed burst names its cause.
 */

type Kubectl = (...args: string[]) => Promise<string>;

interface EndpointSample {
  at_ms: number;
  ready: number;
  not_ready: number;
}

interface PodList {
  items: Array<{
    metadata: { name: string; labels?: Record<string, string> };
    status: {
      phase?: string;
      containerStatuses?: Array<{
        restartCount: number;
        ready: boolean;
        lastState?: { terminated?: { reason?: string; exitCode?: number; finishedAt?: string } };
      }>;
    };
  }>;
}

interface EventList {
  items: Array<{
    type: string;
    reason: string;
    message?: string;
    count?: number;
    involvedObject: { kind: string; name: string };
    lastTimestamp?: string;
    eventTime?: string;
  }>;
}

/** Run Pods and warm Pods carry this label; everything else in the namespace is the platform. */
const RUN_POD_LABEL = 'conveyor.dev/run-sandbox';

export class PlatformHealth {
  private readonly endpoints: EndpointSample[] = [];
  private readonly timer: NodeJS.Timeout;
  private readonly startedAt = Date.now();

  private constructor(
    private readonly kubectl: Kubectl,
    private readonly service: string,
  ) {
    // A failed read (the API server itself starved) is a gap in the samples.
    this.timer = setInterval(() => this.sampleEndpoints().catch(() => undefined), 1000);
  }

  static start(kubectl: Kubectl, service = 'conveyor-gateway'): PlatformHealth {
    return new PlatformHealth(kubectl, service);
  }

  private async sampleEndpoints(): Promise<void> {
    const at = Date.now() - this.startedAt;
    const ep = JSON.parse(await this.kubectl('get', 'endpoints', this.service, '-o', 'json')) as {
      subsets?: Array<{ addresses?: unknown[]; notReadyAddresses?: unknown[] }>;
    };
    const subsets = ep.subsets ?? [];
    this.endpoints.push({
      at_ms: at,
      ready: subsets.reduce((n, s) => n + (s.addresses?.length ?? 0), 0),
      not_ready: subsets.reduce((n, s) => n + (s.notReadyAddresses?.length ?? 0), 0),
    });
  }

  /** Stops sampling and reads the platform Pods' restarts and the Warning events since start. */
  async stop(): Promise<Record<string, unknown>> {
    clearInterval(this.timer);
    const pods = JSON.parse(await this.kubectl('get', 'pods', '-o', 'json')) as PodList;
    const events = JSON.parse(
      await this.kubectl('get', 'events', '--field-selector=type=Warning', '-o', 'json'),
    ) as EventList;
    const platform = pods.items.filter((p) => !(RUN_POD_LABEL in (p.metadata.labels ?? {})));
    const platformNames = new Set(platform.map((p) => p.metadata.name));
    const since = this.startedAt - 1000;
    const notReady = this.endpoints.filter((s) => s.ready === 0);
    return {
      service: this.service,
      endpoint_samples: this.endpoints.length,
      min_ready_endpoints: this.endpoints.length ? Math.min(...this.endpoints.map((s) => s.ready)) : null,
      seconds_without_ready_endpoint: notReady.length,
      first_without_ready_endpoint_ms: notReady[0]?.at_ms ?? null,
      pods: platform.map((p) => ({
        name: p.metadata.name,
        phase: p.status.phase,
        restarts: (p.status.containerStatuses ?? []).reduce((n, c) => n + c.restartCount, 0),
        last_termination: (p.status.containerStatuses ?? []).flatMap((c) =>
          c.lastState?.terminated ? [c.lastState.terminated] : [],
        ),
      })),
      warnings: events.items
        .filter((e) => Date.parse(e.lastTimestamp ?? e.eventTime ?? '') >= since)
        .filter((e) => e.involvedObject.kind !== 'Pod' || platformNames.has(e.involvedObject.name))
        .map((e) => ({
          object: `${e.involvedObject.kind}/${e.involvedObject.name}`,
          reason: e.reason,
          count: e.count ?? 1,
          message: (e.message ?? '').slice(0, 300),
        })),
    };
  }
}
