import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/** HMAC-SHA256 over the concatenation of `parts`, fed piecewise so the body is never copied. */
export function hmacSha256(key: string | Buffer, parts: ReadonlyArray<string | Buffer>): Buffer {
  const mac = createHmac('sha256', key);
  for (const part of parts) mac.update(part);
  return mac.digest();
}

const sha256 = (value: string): Buffer => createHash('sha256').update(value).digest();

/**
 * Constant-time string equality. Both sides are hashed first so `timingSafeEqual` always sees equal-length
 * buffers and neither a length difference nor the position of the first differing byte leaks.
 */
export function secretsEqual(a: string, b: string): boolean {
  return timingSafeEqual(sha256(a), sha256(b));
}
