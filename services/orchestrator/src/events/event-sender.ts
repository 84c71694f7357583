import http from 'node:http';
import https from 'node:https';
import { pinnedLookup } from '../egress/pinned-lookup';

export interface SendResult {
  /** Absent when no response arrived (refused, reset, timed out). */
  statusCode?: number;
  /** What `Retry-After` asked for, in ms (429 and 503 only). */
  retryAfterMs?: number;
  error?: string;
  latencyMs: number;
}

/** What is read of a receiver's answer: enough to report, never enough to hold memory. */
const MAX_RESPONSE_BYTES = 4096;

/** `Retry-After` as delay-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/**
 * POSTs one signed event. The connection goes to `address`, the one the egress policy just checked for the URL's
 * host (TLS still verifies the certificate against the host name), so a second DNS answer cannot send it elsewhere;
 * redirects are not followed; the whole attempt, body included, ends after `timeoutMs`.
 */
export function sendEvent(
  url: URL,
  address: string,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
): Promise<SendResult> {
  const started = performance.now();
  const latency = () => Math.round(performance.now() - started);
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve) => {
    const req = client.request(
      url,
      {
        method: 'POST',
        lookup: pinnedLookup(address),
        signal: AbortSignal.timeout(timeoutMs),
        headers: {
          ...headers,
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(body)),
          'user-agent': 'Conveyor-Events/1',
        },
      },
      (res) => {
        let read = 0;
        res.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > MAX_RESPONSE_BYTES) res.destroy();
        });
        res.on('close', () => {
          const statusCode = res.statusCode ?? 0;
          resolve({
            statusCode,
            latencyMs: latency(),
            ...(statusCode === 429 || statusCode === 503
              ? { retryAfterMs: parseRetryAfter(res.headers['retry-after'], Date.now()) }
              : {}),
          });
        });
      },
    );
    req.on('error', (err) => {
      const timedOut = err.name === 'AbortError' || err.name === 'TimeoutError';
      resolve({ error: timedOut ? `no answer within ${timeoutMs} ms` : err.message, latencyMs: latency() });
    });
    req.end(body);
  });
}
