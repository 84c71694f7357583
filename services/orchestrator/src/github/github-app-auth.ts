import { createPrivateKey, sign, type KeyObject } from 'node:crypto';
import { AppError } from '@conveyor/errors';
import { githubMessage, githubRequest, type GitHubApi } from './github-rest';

/** What authenticating as an App needs: its GitHub ID and its private key. */
export interface AppCredentials {
  appId: string;
  privateKey: KeyObject;
}

/** The App's private key (PEM, PKCS#1 as GitHub issues it or PKCS#8); anything else is refused naming the field. */
export function parseAppPrivateKey(pem: string): KeyObject {
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: pem, format: 'pem' });
  } catch {
    throw new AppError('invalid_request', 'private_key is not a PEM private key');
  }
  if (key.asymmetricKeyType !== 'rsa')
    throw new AppError('invalid_request', 'private_key must be the RSA key GitHub generated for the App');
  return key;
}

const base64url = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

/**
 * The App's JWT (RS256), as GitHub documents it: issued 60 s in the past against clock drift, valid 9 minutes (GitHub
 * refuses more than 10), the App ID as issuer. Hand-written with node:crypto: three base64url parts and one RSA
 * signature, where the libraries that do it (universal-github-app-jwt, jose) are ESM-only and this service is not.
 */
export function appJwt(app: AppCredentials, nowMs = Date.now()): string {
  const now = Math.floor(nowMs / 1000);
  const unsigned = `${base64url({ alg: 'RS256', typ: 'JWT' })}.${base64url({ iat: now - 60, exp: now + 540, iss: app.appId })}`;
  return `${unsigned}.${sign('sha256', Buffer.from(unsigned), app.privateKey).toString('base64url')}`;
}

/** GitHub refused the App's credentials (wrong key, App deleted, installation removed): the reason is GitHub's. */
export class AppCredentialsRefused extends AppError {
  constructor(readonly githubReason: string) {
    super('external_authentication_required', `GitHub refused the App's credentials: ${githubReason}`);
  }
}

/** GET /app as the App: proves the key belongs to the App ID and learns its slug (its bot is `<slug>[bot]`). */
export async function verifyApp(api: GitHubApi, app: AppCredentials): Promise<{ slug: string }> {
  const res = await githubRequest(api, appJwt(app), 'GET', '/app');
  if (res.status === 200 && typeof res.body.slug === 'string') return { slug: res.body.slug };
  if (res.status === 401 || res.status === 403 || res.status === 404)
    throw new AppCredentialsRefused(githubMessage(res));
  throw new AppError(
    'resource_unavailable',
    `GitHub could not be asked about the App: ${githubMessage(res)}`,
  );
}

/** Refreshed this long before GitHub's expiry (tokens live an hour), so no call starts with a token about to lapse. */
const REFRESH_MARGIN_MS = 5 * 60_000;

interface CachedToken {
  token: string;
  expiresAt: number;
}

/**
 * Installation access tokens (POST /app/installations/{id}/access_tokens with the App's JWT), cached per App and
 * installation until five minutes before they expire; concurrent callers share one request. Tokens stay in the
 * orchestrator's memory: they are handed to git and the REST client here, never to a runner or a sandbox.
 */
export class InstallationTokens {
  private readonly cache = new Map<string, CachedToken>();
  private readonly pending = new Map<string, Promise<CachedToken>>();

  constructor(
    private readonly api: GitHubApi,
    private readonly now: () => number = Date.now,
  ) {}

  /** A token of the installation limited to one repository (its name without the owner): it can touch nothing else. */
  async token(
    appKey: string,
    app: AppCredentials,
    installationId: number,
    repository: string,
  ): Promise<string> {
    const key = `${appKey}:${installationId}:${repository}`;
    const cached = this.cache.get(key);
    if (cached && cached.expiresAt - REFRESH_MARGIN_MS > this.now()) return cached.token;
    let request = this.pending.get(key);
    if (!request) {
      request = this.issue(app, installationId, repository).finally(() => this.pending.delete(key));
      this.pending.set(key, request);
    }
    const issued = await request;
    this.cache.set(key, issued);
    return issued.token;
  }

  /** Forgets an App's tokens (the App was removed or its key replaced). */
  forget(appKey: string): void {
    for (const key of this.cache.keys()) if (key.startsWith(`${appKey}:`)) this.cache.delete(key);
  }

  private async issue(app: AppCredentials, installationId: number, repository: string): Promise<CachedToken> {
    const res = await githubRequest(
      this.api,
      appJwt(app),
      'POST',
      `/app/installations/${installationId}/access_tokens`,
      { repositories: [repository] },
    );
    if (res.status === 201 && typeof res.body.token === 'string' && typeof res.body.expires_at === 'string')
      return { token: res.body.token, expiresAt: Date.parse(res.body.expires_at) };
    if (res.status === 401 || res.status === 403 || res.status === 404)
      throw new AppCredentialsRefused(githubMessage(res));
    throw new AppError(
      'resource_unavailable',
      `GitHub did not issue an installation token: ${githubMessage(res)}`,
    );
  }
}
