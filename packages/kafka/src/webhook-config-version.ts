/**
 * Part of the ingress ⇄ orchestrator contract, beside the delivery message: after every committed change to a
 * webhook (create, enable, disable, delete, rotate, apply) the orchestrator writes a fresh, never-repeated token to
 * this Redis key; the ingress reads it on every request and refetches its cached configuration whenever the token
 * differs from the one it cached with (or the key is missing), so a change is in force for the next request.
 */
export function webhookConfigVersionKey(webhookUid: string): string {
  return `conveyor:webhook:${webhookUid}:version`;
}
