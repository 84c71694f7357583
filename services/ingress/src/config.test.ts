import { trustProxySetting } from '@conveyor/config';
import { loadIngressConfig } from './config';

describe('ingress config', () => {
  it('defaults to the contract limits', () => {
    // The TLS files have no default: a service without its certificate refuses to start.
    const config = loadIngressConfig({
      GRPC_TLS_CA_FILE: 'ca.pem',
      GRPC_TLS_CERT_FILE: 'ingress.pem',
      GRPC_TLS_KEY_FILE: 'ingress-key.pem',
    });
    expect(config.MAX_BODY_BYTES).toBe(256 * 1024);
    expect(config.DELIVERY_RATE_PER_MINUTE).toBe(60);
    expect(config.FAILED_AUTH_PER_MINUTE).toBeLessThan(config.DELIVERY_RATE_PER_MINUTE);
    expect(config.DEDUPE_TTL_SECONDS).toBeGreaterThanOrEqual(7 * 24 * 3600);
    expect(trustProxySetting(config.TRUST_PROXY)).toBe(false);
  });

  it('refuses to load without the TLS files', () => {
    expect(() => loadIngressConfig({})).toThrow(/GRPC_TLS_CA_FILE/);
  });
});
