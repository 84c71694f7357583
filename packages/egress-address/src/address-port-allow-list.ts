import ipaddr from 'ipaddr.js';
import { parseAddress } from './public-address';

interface Entry {
  range: [ipaddr.IPv4 | ipaddr.IPv6, number];
  port: number;
}

// `10.0.0.5:8443`, `10.20.0.0/16:443`, `[fd00::5]:8443`, `[fd00::/64]:443`.
const ENTRY = /^(?:\[([0-9a-fA-F:.]+(?:\/\d{1,3})?)\]|([0-9.]+(?:\/\d{1,2})?)):(\d{1,5})$/;

function parseEntry(text: string): Entry | undefined {
  const match = ENTRY.exec(text.trim());
  if (!match) return undefined;
  const host = (match[1] ?? match[2])!;
  const port = Number(match[3]);
  if (port < 1 || port > 65535) return undefined;
  if (host.includes('/')) {
    if (!ipaddr.isValidCIDR(host)) return undefined;
    const [range, bits] = ipaddr.parseCIDR(host);
    // A mapped range would never match: addresses are compared in the family they reach.
    return match[1] !== undefined && range.kind() !== 'ipv6' ? undefined : { range: [range, bits], port };
  }
  const ip = parseAddress(host);
  if (ip === undefined || (match[1] !== undefined) !== (ip.kind() === 'ipv6')) return undefined;
  return { range: [ip, ip.kind() === 'ipv4' ? 32 : 128], port };
}

/** Whether `text` is one entry of an address:port allow-list (for configuration validation). */
export function isAddressPortEntry(text: string): boolean {
  return parseEntry(text) !== undefined;
}

/**
 * Internal destinations an operator lets the platform's own fetches reach (EGRESS_ALLOWED_ADDRESSES): each entry an
 * address or CIDR **and one port**, IPv6 in brackets. Allowing an address never allows its other ports, so an
 * allowed internal service cannot be used to reach whatever else listens on that host.
 */
export class AddressPortAllowList {
  private readonly entries: Entry[];

  constructor(entries: readonly string[], settingName: string) {
    this.entries = entries.map((text) => {
      const entry = parseEntry(text);
      if (!entry)
        throw new Error(
          `${settingName}: ${JSON.stringify(text)} is not ADDRESS:PORT or CIDR:PORT (e.g. 10.0.0.5:8443, 10.20.0.0/16:443, [fd00::5]:8443)`,
        );
      return entry;
    });
  }

  allows(address: string, port: number): boolean {
    const ip = parseAddress(address);
    if (ip === undefined) return false;
    return this.entries.some(
      ({ range: [range, bits], port: allowed }) =>
        allowed === port && range.kind() === ip.kind() && ip.match(range, bits),
    );
  }
}
