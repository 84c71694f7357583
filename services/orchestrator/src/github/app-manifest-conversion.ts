import { request } from '@octokit/request';
import { RequestError } from '@octokit/request-error';
import { Agent, fetch as undiciFetch } from 'undici';
import { AppError } from '@conveyor/errors';
import { urlPort } from '../egress/egress-policy';
import { pinnedLookup } from '../egress/pinned-lookup';
import type { GitHubApi } from './github-rest';

/** What GitHub hands over for a manifest code: the new App and its credentials (held in memory until registered). */
export interface ManifestConversion {
  appId: string;
  slug: string;
  pem: string;
  webhookSecret: string;
}

/** GitHub refused the manifest code (unknown, used or older than an hour): the reason is GitHub's. */
export class ManifestCodeRefused extends AppError {
  constructor(readonly githubReason: string) {
    super('invalid_request', `GitHub refused the manifest code: ${githubReason}`);
  }
}

/**
 * POST /app-manifests/{code}/conversions (no authentication: the single-use code is the credential), through Octokit.
 * Its fetch goes to the address the egress policy just checked (lookup pinned, TLS still verified against the host
 * name) and follows no redirect, as every provider call of the orchestrator does.
 */
export async function convertManifestCode(api: GitHubApi, code: string): Promise<ManifestConversion> {
  const base = new URL(api.baseUrl);
  const [address] = await api.policy.resolvePermitted(base.hostname, urlPort(base));
  const dispatcher = new Agent({ connect: { lookup: pinnedLookup(address!) } });
  try {
    const { data } = await request('POST /app-manifests/{code}/conversions', {
      baseUrl: api.baseUrl.replace(/\/+$/, ''),
      code,
      headers: { 'user-agent': 'Conveyor', 'x-github-api-version': '2022-11-28' },
      request: {
        signal: AbortSignal.timeout(api.timeoutMs),
        fetch: (url: string, init: Parameters<typeof undiciFetch>[1]) =>
          undiciFetch(url, { ...init, dispatcher, redirect: 'manual' }),
      },
    });
    const answer = data as unknown as Record<string, unknown>;
    const { id, slug, pem, webhook_secret } = answer;
    if (typeof id !== 'number' || typeof slug !== 'string' || typeof pem !== 'string')
      throw new AppError('resource_unavailable', 'GitHub answered the manifest conversion without the App');
    if (typeof webhook_secret !== 'string')
      throw new AppError('resource_unavailable', 'GitHub created the App without a webhook secret');
    return { appId: String(id), slug, pem, webhookSecret: webhook_secret };
  } catch (err) {
    if (err instanceof RequestError && err.status >= 400 && err.status < 500)
      throw new ManifestCodeRefused(githubReason(err));
    if (err instanceof AppError) throw err;
    // Octokit's own text may carry the URL and the driver's words: the caller learns only what failed.
    throw new AppError('resource_unavailable', 'GitHub could not be asked to convert the manifest code');
  } finally {
    await dispatcher.close();
  }
}

const githubReason = (err: RequestError): string => {
  const body = err.response?.data as { message?: unknown } | undefined;
  return (typeof body?.message === 'string' ? body.message : `HTTP ${err.status}`).slice(0, 500);
};
