import net from 'node:net';
import type { LookupFunction } from 'node:net';

/**
 * A `lookup` for node's http(s) clients that answers with the one address the egress policy just checked, so a second
 * DNS answer (rebinding) cannot send the connection elsewhere; TLS still verifies the certificate against the host name.
 */
export function pinnedLookup(address: string): LookupFunction {
  return (_host, options, callback) => {
    const family = net.isIP(address);
    if (options.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  };
}
