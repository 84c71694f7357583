import { GITHUB, SHOPIFY, verifyBodyHmac } from './body-hmac';
import { verifyGitlab } from './gitlab';
import { verifyLinear } from './linear';
import { isSignatureScheme, type SignatureScheme } from './signature-scheme';
import { verifySlack } from './slack';
import { verifyStandardWebhooks } from './standard-webhooks';
import { verifyStripe } from './stripe';
import { fail, type SchemeVerifyInput, type VerifyResult } from './types';

export interface VerifySignatureInput extends SchemeVerifyInput {
  scheme: SignatureScheme;
}

const VERIFIERS: Record<SignatureScheme, (input: SchemeVerifyInput) => VerifyResult> = {
  'standard-webhooks': verifyStandardWebhooks,
  stripe: verifyStripe,
  github: ({ secret, headers, rawBody }) => verifyBodyHmac(GITHUB, secret, headers, rawBody),
  gitlab: verifyGitlab,
  slack: verifySlack,
  linear: verifyLinear,
  shopify: ({ secret, headers, rawBody }) => verifyBodyHmac(SHOPIFY, secret, headers, rawBody),
};

/**
 * Verifies a delivery against the webhook's provider scheme. Never throws on request data: every missing,
 * malformed, duplicated, stale or wrong header is `{ ok: false, reason }`, which the ingress answers with 401.
 */
export function verifySignature(input: VerifySignatureInput): VerifyResult {
  // Fail closed on configuration the types cannot rule out (stored rows, JS callers).
  if (!isSignatureScheme(input.scheme)) return fail('unknown signature scheme');
  if (input.secret === '') return fail('no secret configured');
  if (Number.isNaN(input.now.getTime())) return fail('invalid clock');
  return VERIFIERS[input.scheme](input);
}
