import { createBlobStore, isPresigningBlobStore, S3BlobStore, type BlobStore } from '@conveyor/blob-store';
import type { PrismaClient } from '@conveyor/db';
import { gatewayBlobLinks, type BlobLinkSigner } from './blob-links';
import type { OrchestratorConfig } from '../config';

/** BLOB_STORE=postgres (default, nothing more to run) or s3 (any S3-compatible object store, see config.ts). */
export function configuredBlobStore(db: PrismaClient, config: OrchestratorConfig): BlobStore {
  if (config.BLOB_STORE === 's3') {
    return new S3BlobStore({
      bucket: config.S3_BUCKET!,
      region: config.S3_REGION,
      endpoint: config.S3_ENDPOINT,
      forcePathStyle: config.S3_FORCE_PATH_STYLE,
      prefix: config.S3_PREFIX,
    });
  }
  return createBlobStore(db);
}

/** Artifact downloads: presigned object-store URLs where the store has them, HMAC links to the gateway otherwise. */
export function artifactLinkSigner(blobs: BlobStore, config: OrchestratorConfig): BlobLinkSigner {
  if (isPresigningBlobStore(blobs)) return (key, expiresAt) => blobs.presignedGetUrl(key, expiresAt);
  return gatewayBlobLinks(config.PUBLIC_API_BASE_URL, config.BLOB_SIGNING_SECRET);
}
