import { AddressPortAllowList, isAddressPortEntry } from './address-port-allow-list';

describe('AddressPortAllowList', () => {
  const list = new AddressPortAllowList(
    ['10.0.0.5:8443', '10.20.0.0/16:443', '[fd00::5]:8443', '[fd00:1::/64]:443', '127.0.0.1:9000'],
    'EGRESS_ALLOWED_ADDRESSES',
  );

  it.each([
    ['10.0.0.5', 8443],
    ['10.20.3.4', 443],
    ['fd00::5', 8443],
    ['fd00:1::9', 443],
    ['127.0.0.1', 9000],
    ['::ffff:127.0.0.1', 9000], // mapped: the IPv4 address it reaches
  ])('allows %s port %d', (address, port) => expect(list.allows(address, port)).toBe(true));

  it.each([
    ['10.0.0.5', 22], // another port of an allowed address
    ['10.0.0.5', 443],
    ['10.20.3.4', 8443],
    ['10.21.0.1', 443],
    ['fd00::5', 22],
    ['fd00::6', 8443],
    ['127.0.0.1', 9001],
    ['127.0.0.2', 9000],
    ['2130706433', 9000], // not an address: resolve it first
  ])('refuses %s port %d', (address, port) => expect(list.allows(address, port)).toBe(false));

  it.each([
    '10.0.0.5', // no port: that was every port before
    '10.0.0.0/8',
    '10.0.0.5:0',
    '10.0.0.5:65536',
    '10.0.0.5:*',
    'fd00::5:8443', // IPv6 without brackets is ambiguous
    '[10.0.0.5]:443',
    'internal.example:443', // names: addresses are what is checked
    '10.0.0.0/33:443',
    '0x0a000005:443',
    '',
  ])('rejects the entry %j', (entry) => {
    expect(isAddressPortEntry(entry)).toBe(false);
    expect(() => new AddressPortAllowList([entry], 'EGRESS_ALLOWED_ADDRESSES')).toThrow(
      /^EGRESS_ALLOWED_ADDRESSES: .* is not ADDRESS:PORT or CIDR:PORT/,
    );
  });
});
