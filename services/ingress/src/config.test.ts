import { trustProxySetting } from '@conveyor/config';
import { loadIngressConfig } from './config';

describe('ingress config', () => {
  it('defaults to the contract limits', () => {
    const config = loadIngressConfig({});
    expect(config.MAX_BODY_BYTES).toBe(256 * 1024);
    expect(config.DELIVERY_RATE_PER_MINUTE).toBe(60);
    expect(config.FAILED_AUTH_PER_MINUTE).toBeLessThan(config.DELIVERY_RATE_PER_MINUTE);
    expect(config.DEDUPE_TTL_SECONDS).toBeGreaterThanOrEqual(7 * 24 * 3600);
    expect(trustProxySetting(config.TRUST_PROXY)).toBe(false);
  });
});
