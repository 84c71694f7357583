import type { PrismaClient } from '@conveyor/db';
import type { BlobStore } from './blob-store';
import { PostgresBlobStore } from './postgres-blob-store';

export * from './blob-store';
export * from './postgres-blob-store';
export * from './signed-url';
export * from './s3-blob-store';

/** The platform's blob store; PostgreSQL until another backend is configured. */
export function createBlobStore(db: PrismaClient): BlobStore {
  return new PostgresBlobStore(db);
}
