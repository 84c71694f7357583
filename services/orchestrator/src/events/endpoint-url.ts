import { AppError } from '@conveyor/errors';
import { urlPort, type EgressPolicy } from '../egress/egress-policy';

export interface EndpointUrlRules {
  /** The egress rules of the platform's git fetches: public addresses, plus EGRESS_ALLOWED_ADDRESSES. */
  policy: EgressPolicy;
  /** Hosts that may be named with http:// (EVENT_HTTP_ALLOWED_HOSTS); everything else must be https. */
  httpHosts: readonly string[];
}

const MAX_URL_LENGTH = 2048;

/** The parsed URL of an endpoint, refused unless https (or http to an allow-listed host) without credentials. */
export function parseEndpointUrl(raw: string, rules: EndpointUrlRules): URL {
  const refuse = (why: string) => new AppError('invalid_request', `url ${why}`);
  if (raw.length > MAX_URL_LENGTH) throw refuse(`must be at most ${MAX_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refuse('is not an absolute URL');
  }
  if (url.username || url.password) throw refuse('must not carry credentials');
  if (url.hash) throw refuse('must not have a fragment');
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (url.protocol === 'http:' && !rules.httpHosts.includes(host))
    throw refuse('must use https (http only for the hosts in EVENT_HTTP_ALLOWED_HOSTS)');
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw refuse('must use https');
  return url;
}

/**
 * The addresses the endpoint may be reached at, every one permitted by the egress policy. Checked when the endpoint
 * is saved and again before every attempt (DNS may answer differently later: rebinding); the attempt then connects
 * to the address checked here.
 */
export async function resolveEndpoint(url: URL, rules: EndpointUrlRules): Promise<string[]> {
  return rules.policy.resolvePermitted(url.hostname, urlPort(url));
}
