import {
  isSignatureScheme,
  isUrlSafeSecret,
  SIGNATURE_SCHEMES,
  type SignatureScheme,
} from '@conveyor/webhook-auth';

/** Pure rules of webhook configuration, shared by the API and definitions as code. */

export const AUTH_MODES = ['token', 'url_token', 'signature'] as const;
export type AuthMode = (typeof AUTH_MODES)[number];

export const MAX_WEBHOOKS_PER_FACTORY = 20;

/** Names of webhooks and automations defined as code: their file names (`webhooks/<name>.yaml`). */
export const DEFINITION_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
export const DEFINITION_NAME_RULE =
  '1-64 characters of letters, digits, "_", "-" or ".", starting with a letter or digit';

/** An HTTP header field name (RFC 9110 token), at most 100 characters. */
const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$/;

export function isAuthMode(value: unknown): value is AuthMode {
  return typeof value === 'string' && (AUTH_MODES as readonly string[]).includes(value);
}

export function isValidHeaderName(value: string): boolean {
  return HEADER_NAME.test(value);
}

export { isSignatureScheme, SIGNATURE_SCHEMES, type SignatureScheme };

/** The suggested team-secret name of a webhook: `WEBHOOK_<NAME>_SECRET`, upper case, other characters as `_`. */
export function defaultSecretName(webhookName: string): string {
  const slug = webhookName
    .toUpperCase()
    .replace(/[^A-Z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
  return `WEBHOOK_${slug || 'UNNAMED'}_SECRET`.slice(0, 128);
}

const STANDARD_WEBHOOKS_SECRET = /^(whsec_)?[A-Za-z0-9+/_-]+={0,2}$/;

/**
 * Why `secret` cannot be the credential of a webhook in this mode, or undefined when it can. A `url_token` secret
 * must be URL-safe (it is a path segment); a Standard Webhooks secret must be base64 (optionally `whsec_`-prefixed).
 */
export function credentialProblem(
  authMode: AuthMode,
  scheme: string | null | undefined,
  secret: string,
): string | undefined {
  if (secret === '') return 'is empty';
  if (authMode === 'url_token' && !isUrlSafeSecret(secret)) {
    return 'is not URL-safe: a url_token secret must be at least 16 characters of A-Z, a-z, 0-9, "_" and "-"';
  }
  if (authMode === 'signature' && scheme === 'standard-webhooks' && !STANDARD_WEBHOOKS_SECRET.test(secret)) {
    return 'is not a Standard Webhooks secret (base64, optionally prefixed with whsec_)';
  }
  return undefined;
}

/** Schemes whose secret the platform generates when the provider secret is left blank. */
export function generatesSecret(authMode: AuthMode, scheme: string | null | undefined): boolean {
  return authMode !== 'signature' || scheme === 'standard-webhooks';
}

/** `{base}/webhooks/w/{uid}`; in url_token mode `/{token}` follows (the real secret, or the `{token}` placeholder). */
export function ingressUrl(webhookBaseUrl: string, uid: string, authMode: string, token?: string): string {
  const base = `${webhookBaseUrl.replace(/\/+$/, '')}/webhooks/w/${uid}`;
  return authMode === 'url_token' ? `${base}/${token ?? '{token}'}` : base;
}
