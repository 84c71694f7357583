import { lookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';
import { AppError } from '@conveyor/errors';

type Cidr = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** How a host name becomes addresses (DNS in production; tests may answer with their own). */
export type Resolve = (host: string) => Promise<string[]>;

const dnsResolve: Resolve = async (host) =>
  (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/**
 * Where the platform's own outbound fetches (skill discovery's git) may go: public unicast addresses, plus the
 * CIDRs an operator allow-lists (EGRESS_ALLOWED_ADDRESSES). Loopback, private (RFC 1918, fc00::/7), link-local
 * (169.254/16 — cloud metadata —, fe80::/10), carrier-grade NAT, multicast, reserved and unspecified addresses are
 * refused after DNS resolution; IPv4-mapped IPv6 (::ffff:127.0.0.1) is judged as the IPv4 address it carries.
 * Range classification is ipaddr.js's.
 */
export class EgressPolicy {
  private readonly allowed: Cidr[];

  constructor(
    allowedCidrs: string[],
    private readonly resolve: Resolve = dnsResolve,
  ) {
    this.allowed = allowedCidrs.map((cidr) => {
      try {
        return ipaddr.parseCIDR(cidr);
      } catch {
        throw new Error(
          `EGRESS_ALLOWED_ADDRESSES: ${JSON.stringify(cidr)} is not a CIDR (e.g. 10.0.0.0/8, ::1/128)`,
        );
      }
    });
  }

  /** Whether one address may be reached. */
  permits(address: string): boolean {
    if (!ipaddr.isValid(address)) return false;
    const ip = normalize(ipaddr.parse(address));
    if (this.allowed.some(([range, bits]) => range.kind() === ip.kind() && ip.match(range, bits)))
      return true;
    return ip.range() === 'unicast';
  }

  /**
   * The addresses `host` (a name or an IP literal, IPv6 with or without brackets) resolves to, all of them
   * permitted; refused with `invalid_request` when any is not (a name answering with one public and one private
   * address is refused: the client could pick either).
   */
  async resolvePermitted(host: string): Promise<string[]> {
    const bare = host.replace(/^\[(.*)\]$/, '$1');
    let addresses: string[];
    try {
      addresses = ipaddr.isValid(bare) ? [bare] : await this.resolve(bare);
    } catch {
      throw new AppError('invalid_request', `host ${host} does not resolve`);
    }
    const refused = addresses.filter((a) => !this.permits(a));
    if (addresses.length === 0 || refused.length > 0) {
      throw new AppError(
        'invalid_request',
        `host ${host} resolves to an address outbound fetches may not reach (${refused.join(', ') || 'none'}); an operator can allow it with EGRESS_ALLOWED_ADDRESSES`,
      );
    }
    return addresses;
  }
}

/** IPv4-mapped IPv6 addresses are their IPv4 address. */
function normalize(ip: ipaddr.IPv4 | ipaddr.IPv6): ipaddr.IPv4 | ipaddr.IPv6 {
  return ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress()
    ? (ip as ipaddr.IPv6).toIPv4Address()
    : ip;
}
