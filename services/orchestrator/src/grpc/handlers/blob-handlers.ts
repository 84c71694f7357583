import type { BlobStore } from '@conveyor/blob-store';
import type { Logger } from '@conveyor/logger';
import type { BlobServiceHandlers } from '@conveyor/proto';
import { unary } from '../unary-handler';
import { readBlob } from '../../blobs/read-blob';

export function blobHandlers({
  blobs,
  secrets,
  logger,
}: {
  blobs: BlobStore;
  secrets: readonly string[];
  logger: Logger;
}): BlobServiceHandlers {
  return {
    ReadBlob: unary(logger, 'ReadBlob', async (req) => readBlob(blobs, secrets, req.token)),
  };
}
