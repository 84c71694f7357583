import { signBlobUrl } from '@conveyor/blob-store';

/** Makes a time-limited download URL for a blob key; the store decides how (HMAC link to the gateway, S3 presign). */
export type BlobLinkSigner = (key: string, expiresAt: Date) => Promise<string>;

/** The default: an HMAC-signed `GET /v1/blobs/{token}` link that the orchestrator verifies again in ReadBlob. */
export function gatewayBlobLinks(baseUrl: string, secret: string): BlobLinkSigner {
  return async (key, expiresAt) => signBlobUrl(baseUrl, key, expiresAt, secret);
}
