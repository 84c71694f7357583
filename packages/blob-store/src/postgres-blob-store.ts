import type { PrismaClient } from '@conveyor/db';
import { assertValidBlobKey, type BlobStore, type StoredObject } from './blob-store';

/**
 * The default store: one `Blob` row per key (bytea). Fine for transcripts of a few MB; PostgreSQL stores large
 * values out of line (TOAST), so listing runs never reads them.
 */
export class PostgresBlobStore implements BlobStore {
  constructor(private readonly db: PrismaClient) {}

  async put(key: string, bytes: Uint8Array, contentType: string): Promise<void> {
    assertValidBlobKey(key);
    const data = new Uint8Array(bytes);
    await this.db.storedBlob.upsert({
      where: { key },
      create: { key, contentType, bytes: data, size: data.byteLength },
      update: { contentType, bytes: data, size: data.byteLength, createdAt: new Date() },
    });
  }

  async get(key: string): Promise<StoredObject | undefined> {
    assertValidBlobKey(key);
    const row = await this.db.storedBlob.findUnique({
      where: { key },
      select: { bytes: true, contentType: true },
    });
    return row ? { bytes: Buffer.from(row.bytes), contentType: row.contentType } : undefined;
  }

  async delete(key: string): Promise<void> {
    assertValidBlobKey(key);
    await this.db.storedBlob.deleteMany({ where: { key } });
  }
}
