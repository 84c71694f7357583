import net from 'node:net';
import ipaddr from 'ipaddr.js';

/** IANA's global unicast block: every other IPv6 prefix is special-purpose, unallocated or deprecated. */
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');

/**
 * An address in the text form `net.isIP` accepts (dotted-decimal IPv4, any IPv6 notation), as ipaddr.js parses it;
 * undefined for anything else. Decimal, octal and hex IPv4 forms (`2130706433`, `0177.0.0.1`, `0x7f.1`) are not
 * addresses here: a caller holding one has a host name and must resolve it first (getaddrinfo turns them into the
 * dotted address they mean), so it is judged as the address it reaches.
 */
export function parseAddress(address: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  const family = net.isIP(address);
  if (family === 0) return undefined;
  try {
    // ipaddr.js reads a dotted tail as IPv4-mapped (`::8.8.8.8` as ::ffff:8.8.8.8) where the socket connects to the
    // IPv4-compatible ::808:808; the WHATWG serialisation is the bytes the socket uses, with no dotted tail. Scoped
    // addresses (`fe80::1%eth0`) do not serialise and are refused.
    const ip = ipaddr.parse(family === 6 ? new URL(`http://[${address}]/`).hostname.slice(1, -1) : address);
    // IPv4-mapped IPv6 (`::ffff:127.0.0.1`, `::ffff:7f00:1`) reaches the IPv4 address it carries.
    return ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress()
      ? (ip as ipaddr.IPv6).toIPv4Address()
      : ip;
  } catch {
    return undefined;
  }
}

/**
 * The one answer to "is this address on the public internet?" for every egress decision of the platform (the
 * runner's egress proxy, the orchestrator's git, GitHub and event-endpoint fetches). Public means ipaddr.js classes
 * it `unicast` — so not loopback, private (RFC 1918), carrier-grade NAT, link-local (169.254/16 with cloud metadata,
 * fe80::/10), unique-local (fc00::/7), multicast, broadcast, unspecified, documentation, benchmarking or reserved —
 * and, for IPv6, it lies in 2000::/3 and is no translation or tunnel prefix that can carry an internal IPv4 address
 * (NAT64 64:ff9b::/96 and 64:ff9b:1::/48, 6to4 2002::/16, Teredo 2001::/32, IPv4-compatible ::a.b.c.d). Anything that
 * is not an address at all is not public.
 */
export function isPublicAddress(address: string): boolean {
  const ip = parseAddress(address);
  if (ip === undefined || ip.range() !== 'unicast') return false;
  return ip.kind() === 'ipv4' || (ip as ipaddr.IPv6).match(GLOBAL_UNICAST_V6);
}
