/** A stored object: its bytes and the media type to serve them with. */
export interface StoredObject {
  bytes: Buffer;
  contentType: string;
}

/**
 * Where raw transcripts and other downloadable bytes live, by key (`transcripts/<runId>/<execution>.jsonl`).
 * Keys are opaque to the store; `/` has no meaning beyond a naming convention. `put` replaces an existing key.
 * Implementations: PostgreSQL (`PostgresBlobStore`, the default, so a self-hosted install needs nothing more);
 * an object store (S3, GCS) fits the same four methods.
 */
export interface BlobStore {
  put(key: string, bytes: Uint8Array, contentType: string): Promise<void>;
  get(key: string): Promise<StoredObject | undefined>;
  /** Deleting a missing key is not an error. */
  delete(key: string): Promise<void>;
}

/** Keys are bounded, printable and free of `..` segments, whatever the implementation. */
export function assertValidBlobKey(key: string): void {
  if (
    key.length === 0 ||
    key.length > 512 ||
    !/^[A-Za-z0-9._\-/]+$/.test(key) ||
    key.split('/').some((s) => s === '' || s === '.' || s === '..')
  ) {
    throw new RangeError(`invalid blob key: ${JSON.stringify(key)}`);
  }
}
