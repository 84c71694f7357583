import { isPresigningBlobStore, objectKey, presignSeconds, S3BlobStore } from './s3-blob-store';

describe('S3 blob store (pure parts)', () => {
  it('maps blob keys under an optional prefix and refuses invalid keys', () => {
    expect(objectKey(undefined, 'artifacts/r/a')).toBe('artifacts/r/a');
    expect(objectKey('/conveyor/prod/', 'artifacts/r/a')).toBe('conveyor/prod/artifacts/r/a');
    expect(() => objectKey('p', '../etc/passwd')).toThrow(RangeError);
  });

  it('bounds presigned lifetimes to what SigV4 accepts', () => {
    const now = new Date('2026-01-01T00:00:00Z');
    expect(presignSeconds(new Date(now.getTime() + 900_000), now)).toBe(900);
    expect(presignSeconds(new Date(now.getTime() - 5000), now)).toBe(1);
    expect(presignSeconds(new Date(now.getTime() + 30 * 24 * 3600_000), now)).toBe(3600);
  });

  it('presigns GET URLs offline with SigV4, for the configured endpoint and lifetime', async () => {
    const store = new S3BlobStore({
      bucket: 'blobs',
      region: 'us-east-1',
      endpoint: 'http://127.0.0.1:9000',
      credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' },
    });
    expect(isPresigningBlobStore(store)).toBe(true);
    const url = new URL(await store.presignedGetUrl('artifacts/run/uid', new Date(Date.now() + 600_000)));
    expect(`${url.origin}${url.pathname}`).toBe('http://127.0.0.1:9000/blobs/artifacts/run/uid');
    expect(url.searchParams.get('X-Amz-Algorithm')).toBe('AWS4-HMAC-SHA256');
    expect(Number(url.searchParams.get('X-Amz-Expires'))).toBeGreaterThanOrEqual(599);
    expect(url.searchParams.get('X-Amz-Signature')).toMatch(/^[0-9a-f]{64}$/);
    expect(url.searchParams.get('response-content-disposition')).toBe('attachment');
    store.close();
  });
});
