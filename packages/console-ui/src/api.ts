/** The console's only way to the server: the REST API under /console/api, with the session cookie and CSRF token. */

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

let csrfToken = '';
let onSignedOut: () => void = () => {};

export function setSession(token: string, signedOut: () => void): void {
  csrfToken = token;
  onSignedOut = signedOut;
}

export const API_BASE = '/console/api';

export async function api<T>(path: string, init: { method?: string; body?: unknown } = {}): Promise<T> {
  const method = init.method ?? 'GET';
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (method !== 'GET') headers['X-CSRF-Token'] = csrfToken;
  if (init.body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(API_BASE + path, {
    method,
    headers,
    credentials: 'same-origin',
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  if (res.status === 401 && path !== '/session') onSignedOut();
  if (!res.ok) {
    const problem = (await res.json().catch(() => ({}))) as { detail?: string; title?: string };
    throw new ApiError(res.status, problem.detail ?? problem.title ?? `Request failed (${res.status})`);
  }
  if (res.status === 204) return undefined as T;
  return (await res.json()) as T;
}

export const errorText = (err: unknown): string => (err instanceof Error ? err.message : String(err));
