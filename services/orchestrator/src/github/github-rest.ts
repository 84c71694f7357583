import http from 'node:http';
import https from 'node:https';
import { AppError } from '@conveyor/errors';
import { urlPort, type EgressPolicy } from '../egress/egress-policy';
import { pinnedLookup } from '../egress/pinned-lookup';

export interface GitHubApi {
  /** `https://api.github.com`, or a GitHub Enterprise Server's `https://<host>/api/v3` (GITHUB_API_URL). */
  baseUrl: string;
  /** The egress rules of git fetches: the API's host must resolve to permitted addresses only. */
  policy: EgressPolicy;
  timeoutMs: number;
}

export interface GitHubResponse {
  status: number;
  /** The answer when it is a JSON object ({} otherwise). */
  body: Record<string, unknown>;
  /** The answer when it is a JSON array, as list endpoints give ([] otherwise). */
  items: Array<Record<string, unknown>>;
}

/** GitHub's answers we read are small JSON objects; anything bigger is cut off rather than held. */
const MAX_RESPONSE_BYTES = 256 * 1024;

/**
 * One call to GitHub's REST API with `token`. The API host is checked against the egress policy right before the call
 * and the connection pinned to the checked address; redirects are not followed. The token goes in the Authorization
 * header only: an error says what failed, never with what.
 */
export async function githubRequest(
  api: GitHubApi,
  token: string,
  method: 'GET' | 'POST' | 'PATCH',
  path: string,
  payload?: unknown,
): Promise<GitHubResponse> {
  const url = new URL(`${api.baseUrl.replace(/\/+$/, '')}${path}`);
  const [address] = await api.policy.resolvePermitted(url.hostname, urlPort(url));
  const body = payload === undefined ? undefined : JSON.stringify(payload);
  const client = url.protocol === 'https:' ? https : http;
  const unavailable = (why: string) =>
    new AppError('resource_unavailable', `GitHub API ${method} ${url.pathname} failed: ${why}`);
  return new Promise((resolve, reject) => {
    const req = client.request(
      url,
      {
        method,
        lookup: pinnedLookup(address!),
        signal: AbortSignal.timeout(api.timeoutMs),
        headers: {
          accept: 'application/vnd.github+json',
          authorization: `Bearer ${token}`,
          'x-github-api-version': '2022-11-28',
          'user-agent': 'Conveyor',
          ...(body === undefined
            ? {}
            : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) }),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        let read = 0;
        res.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > MAX_RESPONSE_BYTES) res.destroy(new Error('response too large'));
          else chunks.push(chunk);
        });
        res.on('error', (err) => reject(unavailable(err.message)));
        res.on('end', () => {
          let parsed: unknown;
          try {
            parsed = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
          } catch {
            parsed = {};
          }
          const items = Array.isArray(parsed) ? (parsed as Array<Record<string, unknown>>) : [];
          const object =
            parsed && typeof parsed === 'object' && !Array.isArray(parsed)
              ? (parsed as Record<string, unknown>)
              : {};
          resolve({ status: res.statusCode ?? 0, body: object, items });
        });
      },
    );
    req.on('error', (err) => {
      const timedOut = err.name === 'AbortError' || err.name === 'TimeoutError';
      reject(unavailable(timedOut ? `no answer within ${api.timeoutMs} ms` : err.message));
    });
    req.end(body);
  });
}

/** GitHub's own explanation of a refusal: `message` and each of `errors[].message`, bounded. */
export function githubMessage(res: GitHubResponse): string {
  const errors = Array.isArray(res.body.errors) ? (res.body.errors as Array<Record<string, unknown>>) : [];
  const parts = [res.body.message, ...errors.map((e) => e.message ?? `${String(e.field)} ${String(e.code)}`)]
    .filter((p): p is string => typeof p === 'string' && p.length > 0)
    .join('; ');
  return (parts || `HTTP ${res.status}`).slice(0, 500);
}

/** A push secret is a bare token or `user:token` (push-run-branch.ts); the REST API takes the token. */
export const apiTokenOf = (secret: string): string =>
  secret.includes(':') ? secret.slice(secret.indexOf(':') + 1) : secret;
