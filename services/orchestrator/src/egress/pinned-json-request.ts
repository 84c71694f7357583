import http from 'node:http';
import https from 'node:https';
import { AppError } from '@conveyor/errors';
import { urlPort, type EgressPolicy } from './egress-policy';
import { pinnedLookup } from './pinned-lookup';

/** A provider's API the orchestrator calls (GitHub's REST API, Linear's GraphQL API). */
export interface ProviderApi {
  /** The egress rules of git fetches: the API's host must resolve to permitted addresses only. */
  policy: EgressPolicy;
  timeoutMs: number;
}

export interface JsonResponse {
  status: number;
  /** The parsed answer (undefined when it is not JSON). */
  json: unknown;
}

/** Providers' answers we read are small JSON documents; anything bigger is cut off rather than held. */
const MAX_RESPONSE_BYTES = 256 * 1024;

/**
 * One JSON request to a provider's API. The host is checked against the egress policy right before the call and the
 * connection pinned to the checked address; redirects are not followed. Credentials go in `headers` only: an error
 * says what failed (`what`), never with what.
 */
export async function pinnedJsonRequest(
  api: ProviderApi,
  what: string,
  method: 'GET' | 'POST' | 'PATCH',
  url: URL,
  headers: Record<string, string>,
  payload?: unknown,
): Promise<JsonResponse> {
  const [address] = await api.policy.resolvePermitted(url.hostname, urlPort(url));
  const body = payload === undefined ? undefined : JSON.stringify(payload);
  const client = url.protocol === 'https:' ? https : http;
  const unavailable = (why: string) =>
    new AppError('resource_unavailable', `${what} ${method} ${url.pathname} failed: ${why}`);
  return new Promise((resolve, reject) => {
    const req = client.request(
      url,
      {
        method,
        lookup: pinnedLookup(address!),
        signal: AbortSignal.timeout(api.timeoutMs),
        headers: {
          'user-agent': 'Conveyor',
          ...headers,
          ...(body === undefined
            ? {}
            : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) }),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        let read = 0;
        res.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > MAX_RESPONSE_BYTES) res.destroy(new Error('response too large'));
          else chunks.push(chunk);
        });
        res.on('error', (err) => reject(unavailable(err.message)));
        res.on('end', () => {
          let json: unknown;
          try {
            json = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, json });
        });
      },
    );
    req.on('error', (err) => {
      const timedOut = err.name === 'AbortError' || err.name === 'TimeoutError';
      reject(unavailable(timedOut ? `no answer within ${api.timeoutMs} ms` : err.message));
    });
    req.end(body);
  });
}
