import type { Attributes } from '@opentelemetry/api';

const REDACTED = 'REDACTED';

/**
 * Query parameters whose values are credentials in flight. The instrumentation's own list (signed cloud-storage URLs)
 * plus `code` and `state`: a GitHub App manifest's code, exchanged for the App's private key, and the flow's state
 * (docs/integrations.md). Both are single use, but a span outlives them, and a code whose exchange failed stays
 * good for an hour.
 */
export const REDACTED_QUERY_PARAMS = [
  'sig',
  'Signature',
  'AWSAccessKeyId',
  'X-Goog-Signature',
  'X-Amz-Signature',
  'X-Amz-Credential',
  'X-Amz-Security-Token',
  'code',
  'state',
];

// Path segments that are credentials: GitHub's `POST /app-manifests/{code}/conversions`.
const SECRET_SEGMENT = /(\/app-manifests\/)[^/?#]+/;

/**
 * The URL attributes of an outgoing request's span with its credentials redacted, or none when the URL has none to
 * redact (the instrumentation's own attributes stand). Given to the undici instrumentation's `startSpanHook`, whose
 * attributes replace its own.
 */
export function redactedUrlAttributes(request: { origin: string; path: string }): Attributes {
  let url: URL;
  try {
    url = new URL(request.path, request.origin);
  } catch {
    return {};
  }
  const path = url.pathname.replace(SECRET_SEGMENT, `$1${REDACTED}`);
  const secretParams = REDACTED_QUERY_PARAMS.filter((name) => url.searchParams.has(name));
  if (path === url.pathname && secretParams.length === 0) return {};
  url.pathname = path;
  for (const name of secretParams) url.searchParams.set(name, REDACTED);
  return { 'url.full': url.toString(), 'url.path': url.pathname, 'url.query': url.search };
}
