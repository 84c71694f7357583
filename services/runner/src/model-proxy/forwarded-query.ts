import type { ProviderProtocol } from './provider-protocols';

/**
 * The query string the upstream gets for a request whose parsed parameters are `query`: only the protocol's own
 * parameters, each once and with a value its CLIs send, rebuilt from the parsed form (so what was checked is exactly
 * what is forwarded, whatever encoding came in); the credential parameter is dropped. `refused` says why not.
 */
export function forwardedQuery(
  protocol: Pick<ProviderProtocol, 'query' | 'credentialQuery'>,
  query: URLSearchParams,
): { search: string } | { refused: string } {
  const kept = new URLSearchParams();
  const seen = new Set<string>();
  for (const [name, value] of query) {
    if (seen.has(name))
      return { refused: `the query parameter ${JSON.stringify(name.slice(0, 64))} is repeated` };
    seen.add(name);
    if (name === protocol.credentialQuery) continue;
    const allowed = Object.hasOwn(protocol.query, name) ? protocol.query[name]! : undefined;
    if (!allowed?.includes(value)) {
      const expected = Object.entries(protocol.query).flatMap(([k, vs]) => vs.map((v) => `${k}=${v}`));
      return {
        refused: `the query parameter ${JSON.stringify(name.slice(0, 64))} is not one inference calls use (allowed: ${
          expected.length ? expected.join(', ') : 'none'
        })`,
      };
    }
    kept.append(name, value);
  }
  const search = kept.toString();
  return { search: search ? `?${search}` : '' };
}
