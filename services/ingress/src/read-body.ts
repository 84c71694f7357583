import type { IncomingMessage } from 'node:http';

export type BodyRead =
  | { ok: true; body: Buffer }
  | { ok: false; reason: 'too_large'; receivedBytes: number }
  | { ok: false; reason: 'aborted' };

/**
 * Reads a request body while streaming and gives up as soon as it exceeds `limit` bytes: a declared
 * Content-Length over the limit fails before a byte is read, and a body that grows past it stops being read (the
 * chunks already held are dropped), so nothing more than `limit` plus one chunk is ever buffered.
 */
export function readBodyWithLimit(req: IncomingMessage, limit: number): Promise<BodyRead> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit)
    return Promise.resolve({ ok: false, reason: 'too_large', receivedBytes: declared });
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let received = 0;
    let settled = false;
    const finish = (result: BodyRead) => {
      if (settled) return;
      settled = true;
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onAbort);
      req.off('aborted', onAbort);
      req.off('close', onClose);
      resolve(result);
    };
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received > limit) {
        chunks.length = 0;
        req.pause();
        finish({ ok: false, reason: 'too_large', receivedBytes: received });
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => finish({ ok: true, body: Buffer.concat(chunks, received) });
    const onAbort = () => finish({ ok: false, reason: 'aborted' });
    const onClose = () => {
      if (!req.complete) onAbort();
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onAbort);
    req.on('aborted', onAbort);
    req.on('close', onClose);
  });
}
