import { lookup } from 'node:dns/promises';
import { AppError } from '@conveyor/errors';
import { AddressPortAllowList, isPublicAddress, parseAddress } from '@conveyor/egress-address';

/** How a host name becomes addresses (DNS in production; tests may answer with their own). */
export type Resolve = (host: string) => Promise<string[]>;

const dnsResolve: Resolve = async (host) =>
  (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

const DEFAULT_PORTS: Readonly<Record<string, number>> = {
  'https:': 443,
  'http:': 80,
  'ssh:': 22,
  'git:': 9418,
};

/** A destination the egress policy refused: `invalid_request` to API callers, with why for the event dispatcher. */
export class EgressRefusedError extends AppError {
  constructor(
    message: string,
    readonly reason: 'unresolvable' | 'not_permitted',
  ) {
    super('invalid_request', message);
  }
}

/** The port a URL connects to: its own, or its scheme's default. */
export function urlPort(url: URL): number {
  return url.port ? Number(url.port) : (DEFAULT_PORTS[url.protocol] ?? 0);
}

/**
 * Where the platform's own outbound fetches (skill discovery's git, GitHub's API, event endpoints) may go: public
 * addresses (`@conveyor/egress-address`, the classifier the runner's egress proxy uses too), plus the address:port
 * pairs an operator allow-lists (EGRESS_ALLOWED_ADDRESSES) — one port each, so allowing an internal service never
 * opens the other ports of its host.
 */
export class EgressPolicy {
  private readonly allowed: AddressPortAllowList;

  constructor(
    allowedEntries: string[],
    private readonly resolve: Resolve = dnsResolve,
  ) {
    this.allowed = new AddressPortAllowList(allowedEntries, 'EGRESS_ALLOWED_ADDRESSES');
  }

  /** Whether one address may be reached on `port`. */
  permits(address: string, port: number): boolean {
    return this.allowed.allows(address, port) || isPublicAddress(address);
  }

  /**
   * The addresses `host` (a name or an IP literal, IPv6 with or without brackets) resolves to, all of them
   * permitted on `port`; refused with `invalid_request` when any is not (a name answering with one public and one
   * private address is refused: the client could pick either).
   */
  async resolvePermitted(host: string, port: number): Promise<string[]> {
    const bare = host.replace(/^\[(.*)\]$/, '$1');
    let addresses: string[];
    try {
      addresses = parseAddress(bare) ? [bare] : await this.resolve(bare);
    } catch {
      throw new EgressRefusedError(`host ${host} does not resolve`, 'unresolvable');
    }
    const refused = addresses.filter((a) => !this.permits(a, port));
    if (addresses.length === 0 || refused.length > 0) {
      throw new EgressRefusedError(
        `host ${host} resolves to an address outbound fetches may not reach on port ${port} (${refused.join(', ') || 'none'}); an operator can allow an address:port with EGRESS_ALLOWED_ADDRESSES`,
        addresses.length === 0 ? 'unresolvable' : 'not_permitted',
      );
    }
    return addresses;
  }
}
