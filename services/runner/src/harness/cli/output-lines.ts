import type { Readable } from 'node:stream';

/**
 * Calls `onLine` with each line of `stream` (its newline and a carriage return before it removed) and the line's
 * length in bytes with its newline, in order; resolves when the stream has ended. Hand-written rather than
 * node:readline: a durable agent's output position must move by exactly the bytes each handled line took
 * (docs/run-lifecycle.md "Runner restarts"), and readline neither reports them nor splits on newlines alone.
 */
export function outputLines(stream: Readable, onLine: (line: string, bytes: number) => void): Promise<void> {
  let carry = Buffer.alloc(0);
  return new Promise((resolve, reject) => {
    stream.on('data', (chunk: Buffer | string) => {
      carry = Buffer.concat([carry, typeof chunk === 'string' ? Buffer.from(chunk) : chunk]);
      for (let end = carry.indexOf(0x0a); end >= 0; end = carry.indexOf(0x0a)) {
        const line = carry.subarray(0, end);
        carry = carry.subarray(end + 1);
        onLine(text(line), end + 1);
      }
    });
    stream.once('error', reject);
    stream.once('close', () => {
      // A last line without its newline: its writer is gone.
      if (carry.length > 0) onLine(text(carry), carry.length);
      carry = Buffer.alloc(0);
      resolve();
    });
  });
}

const text = (line: Buffer) => line.toString('utf8').replace(/\r$/, '');
