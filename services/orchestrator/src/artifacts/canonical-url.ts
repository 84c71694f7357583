/**
 * The canonical form of an external reference's URL: the key `GET /agent/run-by-external-reference` matches on.
 * Both the stored locator and the looked-up URL go through this one function, so spellings of the same address
 * meet (docs/artifacts.md lists the rules):
 *   - parsed by the WHATWG URL parser (the one browsers use): scheme and host lower-cased, IDN hosts in punycode,
 *     default ports dropped, `.`/`..` segments resolved, percent-encoding normalised;
 *   - only http and https; no user info (a credential in a locator is refused, never stored);
 *   - the fragment is dropped (it never reaches the server that owns the resource);
 *   - a trailing slash is dropped from a non-root path; an empty query (`?`) is dropped;
 *   - query parameters keep their order and values (their order can be meaningful).
 * Returns undefined for anything that is not such a URL.
 */
export function canonicalizeUrl(raw: string): string | undefined {
  const text = raw.trim();
  if (text.length === 0 || text.length > 2048) return undefined;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  if (url.username || url.password || !url.hostname) return undefined;
  url.hash = '';
  if (url.pathname.length > 1 && url.pathname.endsWith('/'))
    url.pathname = url.pathname.replace(/\/+$/, '') || '/';
  let out = url.toString();
  if (out.endsWith('?')) out = out.slice(0, -1);
  return out;
}
