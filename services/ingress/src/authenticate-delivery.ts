import {
  secretsEqual,
  verifySignature,
  type SignatureScheme,
  type VerifyResult,
  type WebhookHeaders,
} from '@conveyor/webhook-auth';
import type { WebhookConfig } from './webhook-resolver';

export interface AuthenticateInput {
  webhook: Pick<WebhookConfig, 'authMode' | 'signatureScheme' | 'secret' | 'awaitingSecret'>;
  headers: WebhookHeaders;
  /** The `{token}` path segment, when the request used the url_token form of the URL. */
  pathToken: string | undefined;
  rawBody: Buffer;
  now: Date;
}

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

const fail = (reason: string): VerifyResult => ({ ok: false, reason });

/**
 * The credential check of each auth mode. Every failure is a value with a reason for the delivery log; the ingress
 * answers all of them with 401. Secrets are compared in constant time.
 */
export function authenticateDelivery({
  webhook,
  headers,
  pathToken,
  rawBody,
  now,
}: AuthenticateInput): VerifyResult {
  if (webhook.awaitingSecret || webhook.secret === '')
    return fail('the webhook is awaiting its provider signing secret');
  switch (webhook.authMode) {
    case 'token': {
      if (pathToken !== undefined)
        return fail('a token webhook takes its secret in the Authorization header, not in the URL');
      const header = headers.authorization;
      if (header === undefined || header === '') return fail('missing Authorization header');
      if (typeof header !== 'string') return fail('duplicated Authorization header');
      const match = BEARER.exec(header);
      if (!match) return fail('Authorization header is not "Bearer <secret>"');
      return secretsEqual(match[1]!, webhook.secret) ? { ok: true } : fail('wrong bearer token');
    }
    case 'url_token':
      if (pathToken === undefined || pathToken === '') return fail('missing URL token');
      return secretsEqual(pathToken, webhook.secret) ? { ok: true } : fail('wrong URL token');
    case 'signature':
      if (pathToken !== undefined) return fail('a signature webhook has no secret in its URL');
      return verifySignature({
        scheme: webhook.signatureScheme as SignatureScheme,
        secret: webhook.secret,
        headers,
        rawBody,
        now,
      });
    default:
      return fail(`unknown auth mode ${webhook.authMode}`);
  }
}
