import { createPrismaClient, type PrismaClient } from '@conveyor/db';
import { createTestDatabase, type TestDatabase } from '@conveyor/testing';
import { createBlobStore } from './index';

describe('PostgresBlobStore over real PostgreSQL', () => {
  let database: TestDatabase;
  let db: PrismaClient;

  beforeAll(async () => {
    database = await createTestDatabase();
    db = createPrismaClient(database.url);
  });

  afterAll(async () => {
    await db?.$disconnect();
    await database?.drop();
  });

  it('puts, gets, replaces and deletes bytes by key', async () => {
    const store = createBlobStore(db);
    const bytes = Buffer.from('{"kind":"agent_message"}\n\u0000\u00ff', 'utf8');
    await store.put('transcripts/r1/1.jsonl', bytes, 'application/x-ndjson');
    expect(await store.get('transcripts/r1/1.jsonl')).toEqual({ bytes, contentType: 'application/x-ndjson' });
    const row = await db.storedBlob.findUniqueOrThrow({ where: { key: 'transcripts/r1/1.jsonl' } });
    expect(row.size).toBe(bytes.byteLength);

    await store.put('transcripts/r1/1.jsonl', Buffer.from('v2'), 'text/plain');
    expect(await store.get('transcripts/r1/1.jsonl')).toEqual({
      bytes: Buffer.from('v2'),
      contentType: 'text/plain',
    });

    await store.delete('transcripts/r1/1.jsonl');
    await store.delete('transcripts/r1/1.jsonl');
    expect(await store.get('transcripts/r1/1.jsonl')).toBeUndefined();
  });

  it('stores a few MB', async () => {
    const store = createBlobStore(db);
    const big = Buffer.alloc(3 * 1024 * 1024, 0x61);
    await store.put('big/blob.bin', big, 'application/octet-stream');
    const got = await store.get('big/blob.bin');
    expect(got?.bytes.equals(big)).toBe(true);
  });
});
