import {
  DeleteObjectCommand,
  GetObjectCommand,
  NoSuchKey,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { assertValidBlobKey, type BlobStore, type StoredObject } from './blob-store';
import { MAX_SIGNED_LINK_TTL_SECONDS } from './signed-url';

export interface S3BlobStoreOptions {
  bucket: string;
  region: string;
  /** S3-compatible servers (MinIO, Ceph, R2, moto): their base URL; absent for AWS itself. */
  endpoint?: string;
  /** Path-style addressing (`endpoint/bucket/key`), which most S3-compatible servers need. */
  forcePathStyle?: boolean;
  /** Prepended to every key, so several installations can share a bucket. */
  prefix?: string;
  /** Absent: the AWS default chain (env vars, shared config, instance role). */
  credentials?: S3ClientConfig['credentials'];
}

/** A store whose objects can be fetched directly from a presigned URL (no round trip through the gateway). */
export interface PresigningBlobStore extends BlobStore {
  presignedGetUrl(key: string, expiresAt: Date): Promise<string>;
}

export const isPresigningBlobStore = (store: BlobStore): store is PresigningBlobStore =>
  typeof (store as Partial<PresigningBlobStore>).presignedGetUrl === 'function';

/** SigV4 presigned URLs live at most 7 days and at least a second. */
export function presignSeconds(expiresAt: Date, now: Date = new Date()): number {
  return Math.min(
    MAX_SIGNED_LINK_TTL_SECONDS,
    Math.max(1, Math.floor((expiresAt.getTime() - now.getTime()) / 1000)),
  );
}

/** The object key for a blob key: the configured prefix joined with a single `/`. */
export function objectKey(prefix: string | undefined, key: string): string {
  assertValidBlobKey(key);
  const p = (prefix ?? '').replace(/^\/+|\/+$/g, '');
  return p ? `${p}/${key}` : key;
}

/**
 * The same four operations on an S3-compatible object store, plus presigned GET URLs: the bytes of a download never
 * pass through the platform. Selected by the orchestrator's BLOB_STORE=s3 (see its config).
 */
export class S3BlobStore implements PresigningBlobStore {
  private readonly client: S3Client;

  constructor(private readonly options: S3BlobStoreOptions) {
    this.client = new S3Client({
      region: options.region,
      ...(options.endpoint ? { endpoint: options.endpoint } : {}),
      forcePathStyle: options.forcePathStyle ?? Boolean(options.endpoint),
      ...(options.credentials ? { credentials: options.credentials } : {}),
    });
  }

  async put(key: string, bytes: Uint8Array, contentType: string): Promise<void> {
    await this.client.send(
      new PutObjectCommand({
        Bucket: this.options.bucket,
        Key: objectKey(this.options.prefix, key),
        Body: bytes,
        ContentType: contentType,
      }),
    );
  }

  async get(key: string): Promise<StoredObject | undefined> {
    try {
      const res = await this.client.send(
        new GetObjectCommand({ Bucket: this.options.bucket, Key: objectKey(this.options.prefix, key) }),
      );
      if (!res.Body) return undefined;
      return {
        bytes: Buffer.from(await res.Body.transformToByteArray()),
        contentType: res.ContentType ?? 'application/octet-stream',
      };
    } catch (err) {
      if (err instanceof NoSuchKey || (err as { name?: string }).name === 'NoSuchKey') return undefined;
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    // S3 deletes are idempotent: a missing key is not an error.
    await this.client.send(
      new DeleteObjectCommand({ Bucket: this.options.bucket, Key: objectKey(this.options.prefix, key) }),
    );
  }

  async presignedGetUrl(key: string, expiresAt: Date): Promise<string> {
    // A download, never rendered by a browser (the bucket's origin may be shared with other content).
    const command = new GetObjectCommand({
      Bucket: this.options.bucket,
      Key: objectKey(this.options.prefix, key),
      ResponseContentDisposition: 'attachment',
    });
    return getSignedUrl(this.client, command, { expiresIn: presignSeconds(expiresAt) });
  }

  close(): void {
    this.client.destroy();
  }
}
