import { pinnedJsonRequest, type ProviderApi } from '../egress/pinned-json-request';

export interface GitHubApi extends ProviderApi {
  /** `https://api.github.com`, or a GitHub Enterprise Server's `https://<host>/api/v3` (GITHUB_API_URL). */
  baseUrl: string;
}

export interface GitHubResponse {
  status: number;
  /** The answer when it is a JSON object ({} otherwise). */
  body: Record<string, unknown>;
  /** The answer when it is a JSON array, as list endpoints give ([] otherwise). */
  items: Array<Record<string, unknown>>;
}

/** One call to GitHub's REST API with `token` (egress-checked, pinned, no redirects: egress/pinned-json-request.ts). */
export async function githubRequest(
  api: GitHubApi,
  token: string,
  method: 'GET' | 'POST' | 'PATCH',
  path: string,
  payload?: unknown,
): Promise<GitHubResponse> {
  const url = new URL(`${api.baseUrl.replace(/\/+$/, '')}${path}`);
  const { status, json } = await pinnedJsonRequest(
    api,
    'GitHub API',
    method,
    url,
    {
      accept: 'application/vnd.github+json',
      authorization: `Bearer ${token}`,
      'x-github-api-version': '2022-11-28',
    },
    payload,
  );
  const items = Array.isArray(json) ? (json as Array<Record<string, unknown>>) : [];
  const body =
    json && typeof json === 'object' && !Array.isArray(json) ? (json as Record<string, unknown>) : {};
  return { status, body, items };
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
