import { spawn } from 'node:child_process';
import path from 'node:path';
import { createTestTrust, type TestTrust } from '@conveyor/testing';

const ROOT = path.resolve(__dirname, '../../..');
const ANY_PORT = { PORT: '0', HTTP_PORT: '0', GRPC_PORT: '0', WORKER_GRPC_PORT: '0' };

/** Starts a built service with exactly `env` (plus PATH) and returns how it ended and what it said. */
function startService(
  service: string,
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(ROOT, `services/${service}/dist/main.js`)], {
      env: { PATH: process.env.PATH, ...env },
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    // A service that got past its configuration would keep running: that is the failure this suite looks for.
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

/**
 * Finding 2: outside production the signing and encryption keys fell back to constants in the source, and link
 * lifetimes had no upper bound. Now no service starts without its own keys and certificates, in any mode.
 */
describe('finding 2: no default secrets in any mode', () => {
  let trust: TestTrust;

  beforeAll(async () => {
    trust = await createTestTrust();
  });

  afterAll(async () => {
    await trust?.remove();
  });

  it.each(['development', 'test', 'production'])(
    'the orchestrator refuses to start without its keys (NODE_ENV=%s), naming each',
    async (NODE_ENV) => {
      const {
        BLOB_SIGNING_SECRET: _b,
        CONVEYOR_SECRETS_KEY: _c,
        ...tlsOnly
      } = trust.serviceEnv('orchestrator');
      const { code, output } = await startService('orchestrator', { ...tlsOnly, NODE_ENV });
      expect(code).not.toBe(0);
      expect(output).toMatch(/BLOB_SIGNING_SECRET: required/);
      expect(output).toMatch(/CONVEYOR_SECRETS_KEY: required/);
    },
  );

  it('the orchestrator refuses signed-link lifetimes over the cap', async () => {
    const { code, output } = await startService('orchestrator', {
      ...trust.serviceEnv('orchestrator'),
      BLOB_URL_TTL_SECONDS: '86400',
    });
    expect(code).not.toBe(0);
    expect(output).toMatch(/BLOB_URL_TTL_SECONDS/);
  });

  it.each(['orchestrator', 'gateway', 'ingress', 'runner'] as const)(
    '%s refuses to start without its gRPC certificate, naming the variables',
    async (service) => {
      const { code, output } = await startService(service, { NODE_ENV: 'development' });
      expect(code).not.toBe(0);
      for (const name of ['GRPC_TLS_CA_FILE', 'GRPC_TLS_CERT_FILE', 'GRPC_TLS_KEY_FILE'])
        expect(output).toMatch(new RegExp(`${name}: required`));
    },
  );

  it.each(['orchestrator', 'gateway', 'ingress', 'runner'] as const)(
    '%s refuses to start when its certificate file is missing',
    async (service) => {
      // Ports the OS picks, so nothing else on the machine decides how the start fails.
      const env = {
        ...trust.serviceEnv(service),
        ...ANY_PORT,
        GRPC_TLS_CERT_FILE: path.join(trust.pkiDir, 'missing.pem'),
      };
      const { code, output } = await startService(service, env);
      expect(code).not.toBe(0);
      expect(output).toMatch(/GRPC_TLS_CERT_FILE: cannot read/);
    },
  );
});
