import { sqlPool, type PrismaClient } from '@conveyor/db';
import { assertValidBlobKey, type BlobStore, type StoredObject } from './blob-store';

/**
 * The default store: one `Blob` row per key (bytea). Fine for transcripts of a few MB; PostgreSQL stores large
 * values out of line (TOAST), so listing runs never reads them.
 */
export class PostgresBlobStore implements BlobStore {
  constructor(private readonly db: PrismaClient) {}

  async put(key: string, bytes: Uint8Array, contentType: string): Promise<void> {
    assertValidBlobKey(key);
    const data = Buffer.from(bytes);
    // Plain SQL on the client's pool: every executed run stores a transcript here (sqlPool says why).
    await sqlPool(this.db).query(
      `INSERT INTO "Blob" (key, "contentType", bytes, size, "createdAt") VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (key) DO UPDATE
         SET "contentType" = EXCLUDED."contentType", bytes = EXCLUDED.bytes, size = EXCLUDED.size,
             "createdAt" = EXCLUDED."createdAt"`,
      [key, contentType, data, data.byteLength, new Date()],
    );
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
