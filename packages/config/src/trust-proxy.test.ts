import { trustProxySetting } from './trust-proxy';

describe('trustProxySetting', () => {
  it('parses TRUST_PROXY like express, trusting nobody when unset', () => {
    expect(trustProxySetting('false')).toBe(false);
    expect(trustProxySetting('')).toBe(false);
    expect(trustProxySetting('true')).toBe(true);
    expect(trustProxySetting('2')).toBe(2);
    expect(trustProxySetting('loopback, 10.0.0.0/8')).toEqual(['loopback', '10.0.0.0/8']);
  });
});
