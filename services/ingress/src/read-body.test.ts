import type { IncomingMessage } from 'node:http';
import { PassThrough } from 'node:stream';
import { readBodyWithLimit } from './read-body';

function request(
  headers: Record<string, string> = {},
): PassThrough & { headers: Record<string, string>; complete: boolean } {
  const stream = new PassThrough() as PassThrough & { headers: Record<string, string>; complete: boolean };
  stream.headers = headers;
  stream.complete = false;
  stream.on('end', () => (stream.complete = true));
  return stream;
}

describe('readBodyWithLimit', () => {
  it('returns the body when it fits', async () => {
    const req = request();
    const pending = readBodyWithLimit(req as unknown as IncomingMessage, 10);
    req.end(Buffer.from('0123456789'));
    expect(await pending).toEqual({ ok: true, body: Buffer.from('0123456789') });
  });

  it('refuses a declared Content-Length over the limit without reading', async () => {
    const req = request({ 'content-length': '11' });
    const read = jest.fn();
    req.on('data', read);
    expect(await readBodyWithLimit(req as unknown as IncomingMessage, 10)).toEqual({
      ok: false,
      reason: 'too_large',
      receivedBytes: 11,
    });
    expect(read).not.toHaveBeenCalled();
  });

  it('stops as soon as a streamed body passes the limit and reads no more', async () => {
    const req = request();
    const pending = readBodyWithLimit(req as unknown as IncomingMessage, 10);
    req.write(Buffer.alloc(6));
    req.write(Buffer.alloc(6));
    const result = await pending;
    expect(result).toEqual({ ok: false, reason: 'too_large', receivedBytes: 12 });
    expect(req.isPaused()).toBe(true);
    expect(req.listenerCount('data')).toBe(0);
  });

  it('reports an aborted upload', async () => {
    const req = request();
    const pending = readBodyWithLimit(req as unknown as IncomingMessage, 10);
    req.write('abc');
    req.destroy();
    expect(await pending).toEqual({ ok: false, reason: 'aborted' });
  });
});
