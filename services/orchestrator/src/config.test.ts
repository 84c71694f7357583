import { ConfigError } from '@conveyor/config';
import { defaultHarness, loadOrchestratorConfig } from './config';

const required = {
  BLOB_SIGNING_SECRET: 'a'.repeat(32),
  CONVEYOR_SECRETS_KEY: Buffer.alloc(32, 1).toString('base64'),
  GRPC_TLS_CA_FILE: '/pki/ca.pem',
  GRPC_TLS_CERT_FILE: '/pki/orchestrator.pem',
  GRPC_TLS_KEY_FILE: '/pki/orchestrator-key.pem',
};

describe('orchestrator config: no default secrets, capped link lifetimes', () => {
  it('refuses to load without its keys and TLS files in any mode, naming each variable', () => {
    for (const NODE_ENV of ['development', 'test', 'production']) {
      expect(() => loadOrchestratorConfig({ NODE_ENV })).toThrow(ConfigError);
      try {
        loadOrchestratorConfig({ NODE_ENV });
      } catch (err) {
        for (const name of Object.keys(required))
          expect((err as ConfigError).message).toMatch(new RegExp(`${name}: required`));
      }
    }
  });

  it('loads with them, and keeps the local API base and a 15-minute link lifetime by default', () => {
    const config = loadOrchestratorConfig(required);
    expect(config.BLOB_SIGNING_SECRET).toBe(required.BLOB_SIGNING_SECRET);
    expect(config.PUBLIC_API_BASE_URL).toBe('http://127.0.0.1:8080/v1');
    expect(config.BLOB_URL_TTL_SECONDS).toBe(900);
  });

  it('refuses short or malformed keys and link lifetimes over an hour', () => {
    expect(() => loadOrchestratorConfig({ ...required, BLOB_SIGNING_SECRET: 'short' })).toThrow(
      /BLOB_SIGNING_SECRET/,
    );
    expect(() => loadOrchestratorConfig({ ...required, CONVEYOR_SECRETS_KEY: 'c2hvcnQ=' })).toThrow(
      /CONVEYOR_SECRETS_KEY: must be 32 random bytes/,
    );
    expect(() => loadOrchestratorConfig({ ...required, BLOB_URL_TTL_SECONDS: '3601' })).toThrow(
      /BLOB_URL_TTL_SECONDS/,
    );
    expect(() =>
      loadOrchestratorConfig({ ...required, BLOB_SIGNING_PREVIOUS_SECRETS: `${'p'.repeat(32)},short` }),
    ).toThrow(/BLOB_SIGNING_PREVIOUS_SECRETS/);
    expect(
      loadOrchestratorConfig({ ...required, BLOB_SIGNING_PREVIOUS_SECRETS: 'p'.repeat(32) })
        .BLOB_SIGNING_PREVIOUS_SECRETS,
    ).toEqual(['p'.repeat(32)]);
  });
});

describe('orchestrator config: default harness', () => {
  it('is the demo harness only when not in production, and must be chosen in production', () => {
    expect(defaultHarness(loadOrchestratorConfig(required))).toBe('demo');
    expect(() => loadOrchestratorConfig({ ...required, NODE_ENV: 'production' })).toThrow(
      /DEFAULT_HARNESS: required in production/,
    );
    expect(
      defaultHarness(
        loadOrchestratorConfig({ ...required, NODE_ENV: 'production', DEFAULT_HARNESS: 'codex' }),
      ),
    ).toBe('codex');
  });

  it('accepts the built-in harnesses and operator commands only', () => {
    expect(loadOrchestratorConfig({ ...required, DEFAULT_HARNESS: 'command:aider' }).DEFAULT_HARNESS).toBe(
      'command:aider',
    );
    expect(() => loadOrchestratorConfig({ ...required, DEFAULT_HARNESS: 'oz' })).toThrow(/DEFAULT_HARNESS/);
  });

  it('refuses a run lease that outlives the lost-runner bound (the sweep would end adoptable runs)', () => {
    expect(() =>
      loadOrchestratorConfig({ ...required, RUNNER_LOST_AFTER_MS: '30000', RUN_LEASE_EXPIRY_MS: '30000' }),
    ).toThrow(/RUN_LEASE_EXPIRY_MS: must be below RUNNER_LOST_AFTER_MS/);
    expect(
      loadOrchestratorConfig({ ...required, RUNNER_LOST_AFTER_MS: '30000', RUN_LEASE_EXPIRY_MS: '15000' })
        .RUN_LEASE_EXPIRY_MS,
    ).toBe(15_000);
  });
});
