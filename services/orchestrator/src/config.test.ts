import { ConfigError } from '@conveyor/config';
import { DEV_BLOB_SIGNING_SECRET, loadOrchestratorConfig } from './config';

describe('orchestrator config: signed download links', () => {
  it('uses a development secret and the local API base by default', () => {
    const config = loadOrchestratorConfig({});
    expect(config.BLOB_SIGNING_SECRET).toBe(DEV_BLOB_SIGNING_SECRET);
    expect(config.PUBLIC_API_BASE_URL).toBe('http://127.0.0.1:8080/v1');
    expect(config.BLOB_URL_TTL_SECONDS).toBe(900);
  });

  it('requires BLOB_SIGNING_SECRET in production, and a long one anywhere', () => {
    const production = {
      NODE_ENV: 'production',
      CONVEYOR_SECRETS_KEY: Buffer.alloc(32, 1).toString('base64'),
      DEFAULT_HARNESS: 'claude',
    };
    expect(() => loadOrchestratorConfig(production)).toThrow(ConfigError);
    expect(() => loadOrchestratorConfig(production)).toThrow(/BLOB_SIGNING_SECRET: required in production/);
    const secret = 'a'.repeat(32);
    expect(loadOrchestratorConfig({ ...production, BLOB_SIGNING_SECRET: secret }).BLOB_SIGNING_SECRET).toBe(
      secret,
    );
    expect(() => loadOrchestratorConfig({ BLOB_SIGNING_SECRET: 'short' })).toThrow(/BLOB_SIGNING_SECRET/);
  });
});

describe('orchestrator config: default harness', () => {
  const production = { NODE_ENV: 'production', CONVEYOR_SECRETS_KEY: Buffer.alloc(32, 1).toString('base64'), BLOB_SIGNING_SECRET: 'a'.repeat(32) };

  it('is the demo harness only when not in production, and must be chosen in production', () => {
    expect(loadOrchestratorConfig({}).DEFAULT_HARNESS).toBe('demo');
    expect(() => loadOrchestratorConfig(production)).toThrow(/DEFAULT_HARNESS: required in production/);
    expect(loadOrchestratorConfig({ ...production, DEFAULT_HARNESS: 'codex' }).DEFAULT_HARNESS).toBe('codex');
  });

  it('accepts the built-in harnesses and operator commands only', () => {
    expect(loadOrchestratorConfig({ DEFAULT_HARNESS: 'command:aider' }).DEFAULT_HARNESS).toBe('command:aider');
    expect(() => loadOrchestratorConfig({ DEFAULT_HARNESS: 'oz' })).toThrow(/DEFAULT_HARNESS/);
  });
});
