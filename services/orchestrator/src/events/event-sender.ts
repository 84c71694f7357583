import { Pool } from 'undici';
import { pinnedLookup } from '../egress/pinned-lookup';
import { classifySendError, type AttemptError } from './attempt-error';

export interface SendResult {
  /** Absent when no response arrived (refused, reset, timed out). */
  statusCode?: number;
  /** What `Retry-After` asked for, in ms (429 and 503 only). */
  retryAfterMs?: number;
  /** Why no response arrived, as a stable class (never the driver's text). */
  error?: AttemptError;
  latencyMs: number;
}

/** What is read of a receiver's answer: enough to report, never enough to hold memory. */
const MAX_RESPONSE_BYTES = 4096;
/** A receiver's pool unused this long is closed (its endpoint was deleted, or its address changed). */
const IDLE_POOL_MS = 60_000;

/** `Retry-After` as delay-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/**
 * POSTs signed events over kept-alive connections: one undici `Pool` per receiver (origin and the address the egress
 * policy checked), at most `connections` sockets each, so one receiver's slow answers hold only its own sockets. The
 * connection goes to that address (`lookup` pinned; TLS still verifies the certificate against the host name), so a
 * second DNS answer cannot send it elsewhere; redirects are not followed; the whole attempt, body included, ends after
 * `timeoutMs`.
 */
export class EventSender {
  private readonly pools = new Map<string, { pool: Pool; usedAt: number }>();

  constructor(private readonly connections: number) {}

  async send(
    url: URL,
    address: string,
    headers: Record<string, string>,
    body: string,
    timeoutMs: number,
  ): Promise<SendResult> {
    const started = performance.now();
    const latency = () => Math.round(performance.now() - started);
    const signal = AbortSignal.timeout(timeoutMs);
    try {
      const res = await this.pool(url, address).request({
        method: 'POST',
        path: url.pathname + url.search,
        signal,
        headers: { ...headers, 'content-type': 'application/json', 'user-agent': 'Conveyor-Events/1' },
        body,
      });
      let read = 0;
      for await (const chunk of res.body) {
        read += (chunk as Buffer).length;
        if (read > MAX_RESPONSE_BYTES) {
          res.body.destroy();
          break;
        }
      }
      const retryAfter = res.headers['retry-after'];
      return {
        statusCode: res.statusCode,
        latencyMs: latency(),
        ...(res.statusCode === 429 || res.statusCode === 503
          ? {
              retryAfterMs: parseRetryAfter(
                Array.isArray(retryAfter) ? retryAfter[0] : retryAfter,
                Date.now(),
              ),
            }
          : {}),
      };
    } catch (err) {
      return { error: classifySendError(err, signal.aborted), latencyMs: latency() };
    }
  }

  /** Closes the pools nobody used for a while; call now and then. */
  sweep(now = Date.now()): void {
    for (const [key, entry] of this.pools)
      if (now - entry.usedAt > IDLE_POOL_MS) {
        this.pools.delete(key);
        void entry.pool.close().catch(() => undefined);
      }
  }

  async close(): Promise<void> {
    const pools = [...this.pools.values()];
    this.pools.clear();
    await Promise.allSettled(pools.map((p) => p.pool.close()));
  }

  private pool(url: URL, address: string): Pool {
    const key = `${url.origin} ${address}`;
    let entry = this.pools.get(key);
    if (!entry) {
      entry = {
        pool: new Pool(url.origin, {
          connections: this.connections,
          connect: { lookup: pinnedLookup(address) },
        }),
        usedAt: 0,
      };
      this.pools.set(key, entry);
    }
    entry.usedAt = Date.now();
    return entry.pool;
  }
}
