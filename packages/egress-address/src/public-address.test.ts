import { isPublicAddress } from './public-address';

describe('isPublicAddress', () => {
  it.each([
    // IPv4 special ranges
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', '"this network" 0/8'],
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback, end of 127/8'],
    ['10.0.0.1', 'RFC 1918'],
    ['172.16.0.1', 'RFC 1918'],
    ['172.31.255.255', 'RFC 1918'],
    ['192.168.1.1', 'RFC 1918'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['169.254.169.254', 'cloud metadata (link-local)'],
    ['169.254.0.1', 'link-local'],
    ['192.0.0.170', 'IETF protocol assignments (NAT64 discovery)'],
    ['192.0.2.1', 'documentation'],
    ['198.18.0.1', 'benchmarking'],
    ['198.51.100.1', 'documentation'],
    ['203.0.113.1', 'documentation'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast (SSDP)'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'broadcast'],
    // IPv6 special ranges
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback, long form'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local with a zone'],
    ['fc00::1', 'unique-local'],
    ['fd12:3456::1', 'unique-local'],
    ['fec0::1', 'deprecated site-local'],
    ['ff02::1', 'multicast'],
    ['2001:db8::1', 'documentation'],
    ['3fff::1', 'documentation (RFC 9637)'],
    ['100::1', 'discard'],
    ['fd00:ec2::254', 'AWS metadata over IPv6 (unique-local)'],
    // IPv4 inside IPv6
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
    ['::ffff:7f00:1', 'IPv4-mapped loopback, hex form'],
    ['::ffff:169.254.169.254', 'IPv4-mapped metadata'],
    ['::ffff:a9fe:a9fe', 'IPv4-mapped metadata, hex form'],
    ['::ffff:10.0.0.1', 'IPv4-mapped private'],
    ['0:0:0:0:0:ffff:7f00:1', 'IPv4-mapped, long form'],
    ['::ffff:0:7f00:1', 'IPv4-translated (RFC 6145)'],
    ['::127.0.0.1', 'IPv4-compatible (deprecated)'],
    ['::8.8.8.8', 'IPv4-compatible even of a public address (not 2000::/3)'],
    ['64:ff9b::7f00:1', 'NAT64 of loopback'],
    ['64:ff9b::169.254.169.254', 'NAT64 of metadata'],
    ['64:ff9b::8.8.8.8', 'NAT64 even of a public address (the gateway decides)'],
    ['64:ff9b:1::a00:1', 'local-use NAT64 (RFC 8215)'],
    ['2002:7f00:1::1', '6to4 of loopback'],
    ['2002:a9fe:a9fe::1', '6to4 of metadata'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo'],
    ['2001:2::1', 'benchmarking'],
    ['2001:10::1', 'ORCHID'],
    ['5f00::1', 'segment routing'],
    ['4000::1', 'outside 2000::/3, unallocated'],
    // not addresses at all: names to resolve first
    ['2130706433', 'decimal IPv4'],
    ['0x7f000001', 'hex IPv4'],
    ['0x7f.1', 'hex, short IPv4'],
    ['0177.0.0.1', 'octal IPv4'],
    ['127.1', 'short IPv4'],
    ['017700000001', 'octal, long IPv4'],
    ['127.0.0.1.', 'trailing dot'],
    ['[::1]', 'bracketed'],
    ['localhost', 'a name'],
    ['', 'empty'],
    [' 8.8.8.8', 'leading space'],
  ])('refuses %s (%s)', (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '140.82.112.3',
    '100.63.255.255', // just below carrier-grade NAT
    '100.128.0.0', // just above it
    '172.15.255.255',
    '172.32.0.0',
    '169.253.255.255',
    '::ffff:8.8.8.8', // mapped, public IPv4
    '2606:4700:4700::1111',
    '2a00:1450:4001:80b::200e',
    '2001:4860:4860::8888', // in 2001::/16 but outside Teredo and 2001::/23
  ])('allows %s', (address) => {
    expect(isPublicAddress(address)).toBe(true);
  });
});
