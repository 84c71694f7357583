import type { RunningPlatform } from './start-platform';

export type Json = Record<string, unknown>;

/** A JSON call to the gateway, with the platform's seeded key unless another is given. */
export async function apiCall(
  platform: Pick<RunningPlatform, 'apiUrl' | 'apiKey'>,
  method: string,
  path: string,
  body?: unknown,
  key = platform.apiKey,
): Promise<{ status: number; body: Json; headers: Headers }> {
  const res = await fetch(`${platform.apiUrl}${path}`, {
    method,
    headers: {
      Authorization: `Bearer ${key}`,
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : undefined) as Json, headers: res.headers };
}
