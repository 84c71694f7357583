import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { helm, helmTemplate, type KubeObject } from './deploy-tools';
import { kubernetesSchemaErrors, manifestErrors } from './validate-k8s';

// The Helm chart k8s/chart: lint, every values set rendered and validated like the overlays (kubeconform strict and our
// policy), what each values set must change, the credentials it refuses to go without, and that k8s/base is what the
// chart renders (scripts/k8s-render.js).
const ROOT = path.resolve(__dirname, '../../..');
const CHART = path.join(ROOT, 'k8s/chart');
const VALUES_SETS = {
  base: 'k8s/values/base.yaml',
  'kubernetes-test': 'k8s/values/kubernetes-test.yaml',
  'ingress-tls': 'k8s/chart/ci/ingress-tls-values.yaml',
  'managed-services': 'k8s/chart/ci/managed-services-values.yaml',
};
// Every credential given as a value: the chart then keeps them in its own Secret conveyor-credentials.
const AS_VALUES = [
  'postgresql.url=postgresql://conveyor:pw@db.example.com:5432/conveyor?sslmode=verify-full',
  'redis.url=rediss://default:pw@cache.example.com:6379',
  'kafka.brokers=b-1.example.com:9092',
  'platformKeys.secretsKey=c2VjcmV0LWtleS1vZi0zMi1ieXRlcy1mb3ItdGVzdHM=',
  'platformKeys.blobSigningSecret=0123456789abcdef0123456789abcdef',
];

type Spec = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- manifests are free-form JSON

const find = (objects: KubeObject[], kind: string, name: string): Spec => {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (!found) throw new Error(`${kind}/${name} not rendered`);
  return found as Spec;
};
const container = (objects: KubeObject[], service: string): Spec =>
  find(objects, 'Deployment', `conveyor-${service}`).spec.template.spec.containers[0];
const envOf = (objects: KubeObject[], service: string, name: string): Spec | undefined =>
  container(objects, service).env.find((e: Spec) => e.name === name);

describe.each(Object.entries(VALUES_SETS))('k8s/chart with the %s values', (_name, values) => {
  it('passes helm lint --strict', () => {
    const lint = helm(['lint', CHART, '--strict', '--values', path.join(ROOT, values)]);
    expect(lint.stdout).toMatch(/1 chart\(s\) linted, 0 chart\(s\) failed/);
    expect(lint.status).toBe(0);
  });

  it('renders only manifests valid against the Kubernetes schemas and our policy', () => {
    const objects = helmTemplate(CHART, [path.join(ROOT, values)]);
    expect(objects.length).toBeGreaterThan(20);
    expect(manifestErrors(objects)).toEqual([]);
  });
});

describe('k8s/chart values', () => {
  it('ingress-tls: the host with TLS from its Secret, the issuer annotation, images from the registry', () => {
    const objects = helmTemplate(CHART, [path.join(ROOT, VALUES_SETS['ingress-tls'])]);
    const ingress = find(objects, 'Ingress', 'conveyor');
    expect(ingress.spec.tls).toEqual([{ hosts: ['conveyor.example.com'], secretName: 'conveyor-tls' }]);
    expect(ingress.spec.rules.map((r: Spec) => r.host)).toEqual(['conveyor.example.com']);
    expect(ingress.metadata.annotations['cert-manager.io/cluster-issuer']).toBe('letsencrypt');
    const config = find(objects, 'ConfigMap', 'conveyor-config').data;
    expect(config.PUBLIC_URL).toBe('https://conveyor.example.com');
    expect(config.PUBLIC_API_BASE_URL).toBe('https://conveyor.example.com/v1');
    expect(container(objects, 'runner').image).toBe('registry.example.com/conveyor/runner:0.1.0');
    expect(config.SANDBOX_K8S_DEFAULT_IMAGE).toBe('registry.example.com/conveyor/runner:0.1.0');
    expect(find(objects, 'HorizontalPodAutoscaler', 'conveyor-runner').spec).toMatchObject({
      minReplicas: 2,
      maxReplicas: 50,
    });
  });

  it("managed-services: each credential from its provisioner's Secret and key, SCRAM over TLS, fixed replicas", () => {
    const objects = helmTemplate(CHART, [path.join(ROOT, VALUES_SETS['managed-services'])]);
    const ref = (service: string, name: string) => envOf(objects, service, name)?.valueFrom.secretKeyRef;
    expect(ref('orchestrator', 'DATABASE_URL')).toEqual({ name: 'rds-conveyor', key: 'uri' });
    expect(find(objects, 'Job', 'conveyor-migrate').spec.template.spec.containers[0].env).toEqual([
      { name: 'DATABASE_URL', valueFrom: { secretKeyRef: { name: 'rds-conveyor', key: 'uri' } } },
    ]);
    for (const service of ['orchestrator', 'gateway', 'ingress', 'runner'])
      expect(ref(service, 'REDIS_URL')).toEqual({ name: 'elasticache-conveyor', key: 'url' });
    for (const service of ['orchestrator', 'ingress']) {
      expect(ref(service, 'KAFKA_BROKERS')).toEqual({ name: 'msk-conveyor', key: 'bootstrap' });
      expect(ref(service, 'KAFKA_SASL_PASSWORD')).toEqual({
        name: 'msk-conveyor',
        key: 'password',
        optional: true,
      });
    }
    expect(ref('orchestrator', 'CONVEYOR_SECRETS_KEY')).toEqual({
      name: 'conveyor-keys',
      key: 'CONVEYOR_SECRETS_KEY',
    });
    const config = find(objects, 'ConfigMap', 'conveyor-config').data;
    expect(config).toMatchObject({
      KAFKA_SASL_MECHANISM: 'scram-sha-512',
      KAFKA_SSL: 'true',
      SANDBOX_K8S_CPU: '2',
      SANDBOX_K8S_CPU_LIMIT: '4',
      // Where the runner places run Pods (runner.sandbox.*), as the JSON its settings parse.
      SANDBOX_K8S_NODE_SELECTOR: '{"conveyor.dev/pool":"runs"}',
      SANDBOX_K8S_TOLERATIONS: '[{"effect":"NoSchedule","key":"conveyor.dev/runs","operator":"Exists"}]',
      SANDBOX_K8S_PRIORITY_CLASS: 'conveyor-runs',
      RUN_MEMORY_MB: '4096',
      PUBLIC_URL: 'https://agents.example.org',
    });
    expect(objects.filter((o) => o.kind === 'Secret' || o.kind === 'Ingress')).toEqual([]);
    expect(find(objects, 'Deployment', 'conveyor-orchestrator').spec.replicas).toBe(3);
    expect(
      objects.find((o) => o.metadata.name === 'conveyor-orchestrator' && o.kind.endsWith('Autoscaler')),
    ).toBe(undefined);
    const ingressPod = find(objects, 'Deployment', 'conveyor-ingress').spec.template.spec;
    expect(ingressPod.volumes).toContainEqual({ name: 'kafka-ca', secret: { secretName: 'msk-ca' } });
    expect(ingressPod.containers[0].volumeMounts).toContainEqual({
      name: 'kafka-ca',
      mountPath: '/etc/conveyor/kafka-ca',
      readOnly: true,
    });
    expect(find(objects, 'Deployment', 'conveyor-runner').spec.template.spec.nodeSelector).toEqual({
      'conveyor.dev/pool': 'runners',
    });
  });

  it('credentials given as values go into the Secret conveyor-credentials, created before the migration', () => {
    const objects = helmTemplate(CHART, [], [...AS_VALUES, 'publicUrl=https://c.example.com']);
    const secret = find(objects, 'Secret', 'conveyor-credentials');
    expect(kubernetesSchemaErrors(secret as KubeObject)).toEqual([]);
    expect(Object.keys(secret.stringData).sort()).toEqual([
      'BLOB_SIGNING_SECRET',
      'CONVEYOR_SECRETS_KEY',
      'DATABASE_URL',
      'KAFKA_BROKERS',
      'REDIS_URL',
    ]);
    // Helm runs hooks by weight: the Secret, then the Job that reads DATABASE_URL from it.
    const hook = (o: Spec) => Number(o.metadata.annotations['helm.sh/hook-weight']);
    expect(hook(secret)).toBeLessThan(hook(find(objects, 'Job', 'conveyor-migrate')));
    expect(envOf(objects, 'orchestrator', 'DATABASE_URL')?.valueFrom.secretKeyRef).toEqual({
      name: 'conveyor-credentials',
      key: 'DATABASE_URL',
    });
    // No SASL credentials given: the variables are left out rather than pointing at keys that do not exist.
    expect(envOf(objects, 'ingress', 'KAFKA_SASL_USERNAME')).toBeUndefined();
  });

  it("runner: a hand-over bound, not an hour's drain, inside the Pod's grace period; a drain past it is refused", () => {
    const base = path.join(ROOT, VALUES_SETS.base);
    const objects = helmTemplate(CHART, [base]);
    const drainMs = Number(envOf(objects, 'runner', 'SHUTDOWN_TIMEOUT_MS')!.value);
    const graceS = find(objects, 'Deployment', 'conveyor-runner').spec.template.spec
      .terminationGracePeriodSeconds;
    expect(drainMs).toBe(120_000);
    expect(graceS * 1000).toBeGreaterThan(drainMs);
    const refused = helm([
      'template',
      'conveyor',
      CHART,
      '--values',
      base,
      '--set',
      'runner.shutdownTimeoutMs=150000',
    ]);
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toContain(
      'runner.shutdownTimeoutMs must be below runner.terminationGracePeriodSeconds',
    );
  });

  it('a changed setting changes every pod template (helm upgrade rolls the pods)', () => {
    const checksum = (objects: KubeObject[]) =>
      find(objects, 'Deployment', 'conveyor-gateway').spec.template.metadata.annotations['checksum/config'];
    const base = path.join(ROOT, VALUES_SETS.base);
    expect(checksum(helmTemplate(CHART, [base], ['config.LOG_LEVEL=debug']))).not.toBe(
      checksum(helmTemplate(CHART, [base])),
    );
  });
});

describe('k8s/chart refuses to render without a credential', () => {
  // No credential has a default: a chart that made one up (or generated a key) would install a platform whose
  // secrets anyone reading the chart knows, or whose encryption key changes on every upgrade.
  it('with no values at all', () => {
    const run = helm(['template', 'conveyor', CHART, '--set', 'publicUrl=https://c.example.com']);
    expect(run.status).not.toBe(0);
    // The first template helm renders names its first missing credential.
    expect(run.stderr).toMatch(
      /(DATABASE_URL|REDIS_URL|KAFKA_BROKERS|CONVEYOR_SECRETS_KEY|BLOB_SIGNING_SECRET) is required: set \S+ or \S+\.existingSecret\.name/,
    );
  });

  it.each([
    ['postgresql.url', 'DATABASE_URL'],
    ['redis.url', 'REDIS_URL'],
    ['kafka.brokers', 'KAFKA_BROKERS'],
    ['platformKeys.secretsKey', 'CONVEYOR_SECRETS_KEY'],
    ['platformKeys.blobSigningSecret', 'BLOB_SIGNING_SECRET'],
  ])('without %s', (value, variable) => {
    const others = AS_VALUES.filter((pair) => !pair.startsWith(`${value}=`));
    const run = helm([
      'template',
      'conveyor',
      CHART,
      '--set',
      'publicUrl=https://c.example.com',
      ...others.flatMap((p) => ['--set', p]),
    ]);
    expect(run.status).not.toBe(0);
    expect(run.stderr).toContain(`${variable} is required`);
    expect(run.stdout).toBe('');
  });

  it('and without a public URL', () => {
    const run = helm(['template', 'conveyor', CHART, ...AS_VALUES.flatMap((p) => ['--set', p])]);
    expect(run.status).not.toBe(0);
    expect(run.stderr).toMatch(/publicUrl \(or ingress\.host\)/);
  });
});

describe('k8s/base', () => {
  const render = (args: string[]) =>
    spawnSync(process.execPath, ['scripts/k8s-render.js', ...args], { cwd: ROOT, encoding: 'utf8' });

  it('is what the chart renders with k8s/values/base.yaml (npm run k8s:render)', () => {
    const check = render(['--check']);
    expect(check.stderr).toBe('');
    expect(check.status).toBe(0);
  });

  it('a hand edit of the base, or a file the chart does not render, fails the check', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'k8s-base-'));
    try {
      cpSync(path.join(ROOT, 'k8s/base'), dir, { recursive: true });
      const runner = path.join(dir, 'runner.yaml');
      writeFileSync(runner, readFileSync(runner, 'utf8').replace('RUNNER_CONCURRENCY', 'RUNNER_CONCURRENCX'));
      writeFileSync(path.join(dir, 'extra.yaml'), 'kind: ConfigMap\n');
      const check = render(['--check', '--out', dir]);
      expect(check.status).toBe(1);
      expect(check.stderr).toMatch(/differs from the chart in: runner\.yaml, extra\.yaml/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
