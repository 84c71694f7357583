import type { EndpointRoute } from '../sandbox/route-forwarder';
import type { RunSandbox, SandboxEndpoint, SandboxLimitHit, SandboxLimits } from '../sandbox/run-sandbox';

/** The sandbox endpoint under which a run reaches the platform's harness-support API with its run-scoped key. */
export const HARNESS_SUPPORT_ENDPOINT = 'harness-support';

/**
 * A plain-HTTP API base (an installation's internal address) is bridged into the sandbox as an endpoint; an HTTPS one
 * is a public host the run reaches through the egress filter (a bridge would strip nothing, but the name must match
 * the certificate, so it is allow-listed instead).
 */
export function harnessSupportEndpoint(apiBaseUrl: string): SandboxEndpoint[] {
  if (!apiBaseUrl) return [];
  const url = new URL(apiBaseUrl);
  if (url.protocol !== 'http:') return [];
  return [
    {
      name: HARNESS_SUPPORT_ENDPOINT,
      target: { host: url.hostname, port: Number(url.port || 80) },
      routes: runKeyRoutes(url.pathname),
    },
  ];
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * What a run-scoped key may call (the gateway's `runScopedKey` endpoints: harness support and judge scores), under the
 * API base path: the only routes the harness-support endpoint forwards, so the gateway's `/metrics`, `/console` and
 * OpenAPI document are out of a run's reach.
 */
export function runKeyRoutes(basePath: string): EndpointRoute[] {
  const base = escapeRegExp(basePath.replace(/\/+$/, ''));
  return [
    { method: 'POST', path: new RegExp(`^${base}/harness-support/[a-z-]+$`) },
    { method: 'POST', path: new RegExp(`^${base}/agent/runs/[A-Za-z0-9-]+/scores$`) },
  ];
}

export function harnessSupportHosts(apiBaseUrl: string): string[] {
  return apiBaseUrl && new URL(apiBaseUrl).protocol === 'https:' ? [new URL(apiBaseUrl).hostname] : [];
}

/** The API base URL as the run sees it from inside its sandbox. */
export function insideApiBaseUrl(sandbox: RunSandbox, apiBaseUrl: string): string {
  if (harnessSupportEndpoint(apiBaseUrl).length === 0) return apiBaseUrl;
  const url = new URL(apiBaseUrl);
  return `${sandbox.endpointUrl(HARNESS_SUPPORT_ENDPOINT)}${url.pathname.replace(/\/$/, '')}`;
}

const LIMIT_MESSAGES: Record<SandboxLimitHit, (limits: SandboxLimits) => string> = {
  timeout: (l) => `The run exceeded its time limit (${Math.round(l.wallClockMs / 1000)} s) and was stopped`,
  memory: (l) =>
    `The run exceeded its memory limit (${Math.round(l.memoryBytes / 2 ** 20)} MiB) and was stopped`,
  processes: (l) => `The run reached its process limit (${l.maxProcesses}) and was stopped`,
  disk: (l) =>
    `The run's workspace exceeded its disk limit (${Math.round(l.diskBytes / 2 ** 20)} MiB) and was stopped`,
};

/**
 * How a run ends when a sandbox limit ended it: FAILED with `budget_exceeded` (the contract's closed set of codes has
 * no closer one: the run spent its resource budget; retrying the same run would hit it again), the limit in the message.
 */
export function limitCompletion(limit: SandboxLimitHit, limits: SandboxLimits) {
  return { state: 'FAILED' as const, message: LIMIT_MESSAGES[limit](limits), errorCode: 'budget_exceeded' };
}
