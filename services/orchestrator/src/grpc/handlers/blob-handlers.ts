import type { BlobStore } from '@conveyor/blob-store';
import type { Logger } from '@conveyor/logger';
import type { BlobServiceHandlers } from '@conveyor/proto';
import { unary } from '../unary-handler';
import { readBlob } from '../../blobs/read-blob';

export function blobHandlers({
  blobs,
  secret,
  logger,
}: {
  blobs: BlobStore;
  secret: string;
  logger: Logger;
}): BlobServiceHandlers {
  return {
    ReadBlob: unary(logger, 'ReadBlob', async (req) => readBlob(blobs, secret, req.token)),
  };
}
