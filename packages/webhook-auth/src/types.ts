/** Request headers as node's `IncomingHttpHeaders` gives them; names are matched case-insensitively. */
export type WebhookHeaders = Readonly<Record<string, string | readonly string[] | undefined>>;

/** Expected failures are values: the caller answers 401 and records `reason` in the delivery log. */
export type VerifyResult = { ok: true } | { ok: false; reason: string };

/** What every scheme's verifier receives once the scheme has been chosen. */
export interface SchemeVerifyInput {
  secret: string;
  headers: WebhookHeaders;
  /** The body bytes exactly as received: any re-serialisation breaks the signature. */
  rawBody: Buffer;
  now: Date;
}

export const OK: VerifyResult = Object.freeze({ ok: true });

export function fail(reason: string): VerifyResult {
  return { ok: false, reason };
}

/**
 * A webhook as the ingress authenticates deliveries for it: what the orchestrator resolves
 * (WebhookIngressService.ResolveWebhook), with the credential decrypted. `found: false` for an unknown UID.
 */
export interface IngressWebhook {
  found: boolean;
  enabled: boolean;
  /** How deliveries authenticate: `token`, `url_token` or `signature` (docs/webhooks.md). */
  authMode: string;
  signatureScheme: string;
  secret: string;
  /** Signature mode without a secret yet: deliveries are refused until one is set. */
  awaitingSecret: boolean;
  deliveryIdHeader: string;
  teamId: string;
}
