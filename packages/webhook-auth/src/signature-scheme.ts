/** The provider signature schemes a `signature`-mode webhook can be configured with. */
export const SIGNATURE_SCHEMES = [
  'standard-webhooks',
  'stripe',
  'github',
  'gitlab',
  'slack',
  'linear',
  'shopify',
] as const;

export type SignatureScheme = (typeof SIGNATURE_SCHEMES)[number];

export function isSignatureScheme(value: unknown): value is SignatureScheme {
  return typeof value === 'string' && (SIGNATURE_SCHEMES as readonly string[]).includes(value);
}
