import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { composeSchemaErrors } from './validate-compose';

const ROOT = path.resolve(__dirname, '../../..');

type Service = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- compose files are free-form

const loadCompose = () =>
  parse(readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8')) as { services: Record<string, Service> };

describe('docker-compose.yml', () => {
  const compose = loadCompose();
  const services = compose.services;

  it('is valid against the Compose specification', () => {
    expect(composeSchemaErrors(compose)).toEqual([]);
  });

  it('runs the whole platform with pinned infrastructure images', () => {
    expect(Object.keys(services).sort()).toEqual([
      'gateway',
      'ingress',
      'kafka',
      'migrate',
      'orchestrator',
      'pki',
      'postgres',
      'redis',
      'runner',
      'seed',
    ]);
    expect(services.postgres!.image).toBe('postgres:15');
    expect(services.redis!.image).toBe('redis:7');
    expect(services.kafka!.image).toMatch(/^apache\/kafka:4\.\d+\.\d+$/);
    expect(services.kafka!.environment.KAFKA_PROCESS_ROLES).toBe('broker,controller');
  });

  it('gates start order on health and on the one-shot migrator', () => {
    for (const [name, service] of Object.entries(services)) {
      for (const [dependency, { condition }] of Object.entries<{ condition: string }>(
        service.depends_on ?? {},
      )) {
        const target = services[dependency];
        expect(target).toBeDefined();
        if (condition === 'service_healthy')
          expect({ name, dependency, healthcheck: Boolean(target!.healthcheck) }).toEqual({
            name,
            dependency,
            healthcheck: true,
          });
        if (condition === 'service_completed_successfully') expect(target!.restart).toBe('no');
      }
    }
    expect(services.orchestrator!.depends_on.migrate).toEqual({
      condition: 'service_completed_successfully',
    });
    expect(services.migrate!.command).toEqual(['node', 'packages/db/dist/migrate-cli.js']);
    expect(services.seed!.command).toEqual(['node', 'services/orchestrator/dist/cli/main.js', 'seed-dev']);
  });

  it('gives every service its own certificate from the one-shot pki job, and commits no key', () => {
    expect(services.orchestrator!.depends_on.pki).toEqual({ condition: 'service_completed_successfully' });
    for (const name of ['orchestrator', 'gateway', 'ingress', 'runner']) {
      const env = services[name]!.environment;
      expect([env.GRPC_TLS_CA_FILE, env.GRPC_TLS_CERT_FILE, env.GRPC_TLS_KEY_FILE]).toEqual([
        '/pki/ca.pem',
        `/pki/${name}.pem`,
        `/pki/${name}-key.pem`,
      ]);
      expect(services[name]!.volumes).toContain('pki:/pki:ro');
      expect(env.BLOB_SIGNING_SECRET).toBeUndefined();
      expect(env.CONVEYOR_SECRETS_KEY).toBeUndefined();
    }
  });

  it('scales runners safely (`--scale runner=N`): each replica its own workspace volume, no fixed name or port', () => {
    const runner = services.runner!;
    const workspaceRoot = '/workspaces';
    // Short syntax `[SOURCE:]TARGET[:MODE]`: without a source the volume is anonymous, one per container.
    const mounts = (runner.volumes as string[]).filter((v) => v.split(':').includes(workspaceRoot));
    expect(mounts).toEqual([workspaceRoot]);
    expect(Object.keys((compose as { volumes?: object }).volumes ?? {})).not.toContain('runner-workspaces');
    expect(runner.container_name).toBeUndefined();
    expect(runner.ports).toBeUndefined();
  });

  it('builds every Conveyor image from an existing Dockerfile and publishes ports on loopback only', () => {
    for (const service of Object.values(services)) {
      if (service.build)
        expect(existsSync(path.join(ROOT, service.build.context, service.build.dockerfile))).toBe(true);
      for (const port of service.ports ?? []) expect(String(port)).toMatch(/^127\.0\.0\.1:/);
    }
  });
});

describe('the Compose validator catches broken files', () => {
  it('rejects an unknown depends_on condition, a non-list ports field and an unknown top-level key', () => {
    const broken = loadCompose() as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
    broken.services.gateway.depends_on.orchestrator.condition = 'service_ready';
    broken.services.ingress.ports = '8090:8090';
    broken.servics = {};
    const errors = composeSchemaErrors(broken).join('\n');
    expect(errors).toMatch(
      /\/services\/gateway\/depends_on\/orchestrator\/condition must be equal to one of the allowed values/,
    );
    expect(errors).toMatch(/\/services\/ingress\/ports must be array/);
    expect(errors).toMatch(/must NOT have additional properties \(servics\)/);
  });

  it('rejects a malformed healthcheck interval and port mapping', () => {
    const broken = loadCompose() as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
    broken.services.redis.healthcheck.interval = 'five seconds';
    broken.services.gateway.ports = ['127.0.0.1:eighty:8080'];
    const errors = composeSchemaErrors(broken).join('\n');
    expect(errors).toMatch(/\/services\/redis\/healthcheck\/interval must match format "duration"/);
    expect(errors).toMatch(/\/services\/gateway\/ports\/0 must match format "ports"/);
  });
});
