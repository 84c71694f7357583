import { verifyBlobToken, type BlobStore } from '@conveyor/blob-store';
import { AppError, notFound } from '@conveyor/errors';

/**
 * The bytes behind a signed link. The token is the credential: a malformed, tampered or expired link answers
 * 403 not_authorized (details.reason says which); a valid link to a blob deleted since answers 404.
 */
export async function readBlob(
  blobs: BlobStore,
  /** The current signing secret, then the earlier ones still accepted (BLOB_SIGNING_PREVIOUS_SECRETS). */
  secrets: string | readonly string[],
  token: string,
  now: Date = new Date(),
): Promise<{ data: Buffer; content_type: string; expires_at: string }> {
  const check = verifyBlobToken(token, secrets, now);
  if (!check.ok)
    throw new AppError('not_authorized', 'The download link is invalid or has expired', {
      details: { reason: check.reason },
    });
  const blob = await blobs.get(check.key);
  if (!blob) throw notFound('Blob');
  return { data: blob.bytes, content_type: blob.contentType, expires_at: check.expiresAt.toISOString() };
}
