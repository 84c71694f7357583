/** The console's only way to the server: the REST API under /console/api, with the session cookie and CSRF token. */

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** Messages by top-level field name (`allowed_hosts` for `allowed_hosts.0`), for showing at the form field. */
    readonly fields: Record<string, string> = {},
  ) {
    super(message);
  }
}

interface Problem {
  detail?: string;
  title?: string;
  errors?: Array<{ path?: string; message?: string }>;
}

/**
 * Which fields a problem body blames: the gateway's validation lists `errors[{path, message}]`; the orchestrator's
 * own checks (a cron expression, a URL it refuses) say `<field>: <message>` in `detail`.
 */
function fieldsOf(problem: Problem): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const e of problem.errors ?? []) {
    const name = e.path?.split('.')[0];
    if (name && e.message && !fields[name]) fields[name] = e.message;
  }
  const blamed = /^([a-z_]+)(?:\.[\w.]+)?: ([\s\S]+)$/.exec(problem.detail ?? '');
  if (blamed && !fields[blamed[1]!]) fields[blamed[1]!] = blamed[2]!;
  return fields;
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
    const problem = (await res.json().catch(() => ({}))) as Problem;
    throw new ApiError(
      res.status,
      problem.detail ?? problem.title ?? `Request failed (${res.status})`,
      fieldsOf(problem),
    );
  }
  if (res.status === 204) return undefined as T;
  return (await res.json()) as T;
}

export const errorText = (err: unknown): string => (err instanceof Error ? err.message : String(err));
