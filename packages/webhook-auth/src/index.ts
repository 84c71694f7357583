export { SIGNATURE_SCHEMES, isSignatureScheme, type SignatureScheme } from './signature-scheme';
export type { IngressWebhook, VerifyResult, WebhookHeaders } from './types';
export { verifySignature, type VerifySignatureInput } from './verify-signature';
export { providerDeliveryId } from './provider-delivery-id';
export { standardWebhooksSigningKey } from './standard-webhooks';
export { signedContentDigest } from './signed-content';
export { secretsEqual } from './hmac';
export { generateStandardWebhooksSecret, generateWebhookSecret, isUrlSafeSecret } from './secrets';
export {
  signGithub,
  signLinear,
  signShopify,
  signSlack,
  signStandardWebhooks,
  signStripe,
  signWebhook,
  standardWebhooksHeaders,
  type SignedHeaders,
  type SignInput,
  type TimestampedSignInput,
} from './sign';
