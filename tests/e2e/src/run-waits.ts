import type { RunningPlatform } from './platform';

export type Json = Record<string, unknown>;

/** A JSON call to the gateway with the platform's seeded key. */
export async function apiCall(platform: RunningPlatform, method: string, path: string, body?: unknown, key = platform.apiKey): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${platform.apiUrl}${path}`, {
    method,
    headers: { Authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : undefined) as Json };
}

/** Polls a run until it reaches one of `states`; fails with the services' logs otherwise. */
export async function waitForRunState(platform: RunningPlatform, runId: string, states: string[], timeoutMs = 30_000): Promise<Json> {
  const deadline = Date.now() + timeoutMs;
  let last: Json = {};
  while (Date.now() < deadline) {
    last = (await apiCall(platform, 'GET', `/agent/runs/${runId}`)).body;
    if (states.includes(last.state as string)) return last;
    await new Promise((r) => setTimeout(r, 150));
  }
  throw new Error(`run ${runId} stayed ${String(last.state)}, wanted ${states.join('|')}\n${platform.logs().slice(-4000)}`);
}
