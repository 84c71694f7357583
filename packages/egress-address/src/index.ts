export { isPublicAddress, parseAddress } from './public-address';
export { AddressPortAllowList, isAddressPortEntry } from './address-port-allow-list';
