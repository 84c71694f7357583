import path from 'node:path';
import { helmTemplate, kustomizeBuild, type KubeObject } from './deploy-tools';
import { kubernetesSchemaErrors, manifestErrors, policyErrors } from './validate-k8s';

const ROOT = path.resolve(__dirname, '../../..');
// What each way of installing renders, the namespace written into its objects, and the one it is installed in: the
// overlays (kustomize, over the base rendered from the chart), and the chart as `npm run test:kubernetes` installs it
// (helm gives the objects the release's namespace at install).
const RENDERS: Array<[string, () => KubeObject[], string | undefined, string]> = [
  [
    'k8s/overlays/dev',
    () => kustomizeBuild(path.join(ROOT, 'k8s/overlays/dev')),
    'conveyor-dev',
    'conveyor-dev',
  ],
  ['k8s/overlays/prod', () => kustomizeBuild(path.join(ROOT, 'k8s/overlays/prod')), 'conveyor', 'conveyor'],
  [
    'k8s/chart with k8s/values/kubernetes-test.yaml',
    () => helmTemplate(path.join(ROOT, 'k8s/chart'), [path.join(ROOT, 'k8s/values/kubernetes-test.yaml')]),
    undefined,
    'conveyor-test',
  ],
];
const SERVICES = ['gateway', 'ingress', 'orchestrator', 'runner'];

type Spec = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- manifests are free-form JSON

const find = (objects: KubeObject[], kind: string, name: string): Spec => {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (!found) throw new Error(`${kind}/${name} not rendered`);
  return found as Spec;
};

describe.each(RENDERS)('%s', (_name, render, namespace, installedIn) => {
  const objects = render();

  it('renders only manifests valid against the Kubernetes schemas and our policy', () => {
    expect(objects.length).toBeGreaterThan(20);
    expect(manifestErrors(objects)).toEqual([]);
  });

  it('puts everything in the overlay namespace and references only what exists', () => {
    // A PersistentVolume is cluster-wide (the test overlay's snapshot store on the node).
    for (const o of objects.filter((o) => o.kind !== 'PersistentVolume'))
      expect(o.kind === 'Namespace' ? o.metadata.name : o.metadata.namespace).toBe(namespace);
    const secrets = new Set([
      'conveyor-secrets',
      ...objects.filter((o) => o.kind === 'Secret').map((o) => o.metadata.name),
    ]);
    const configMaps = new Set(objects.filter((o) => o.kind === 'ConfigMap').map((o) => o.metadata.name));
    const text = JSON.stringify(objects);
    for (const [, name] of text.matchAll(/"configMapRef":\{"name":"([^"]+)"\}/g))
      expect(configMaps).toContain(name);
    for (const [, name] of text.matchAll(/"secretKeyRef":\{"name":"([^"]+)"/g))
      expect(secrets).toContain(name);
  });

  it.each(SERVICES)(
    'runs %s as a Deployment with a Service, an HPA, a PodDisruptionBudget and probes',
    (service) => {
      const name = `conveyor-${service}`;
      const deployment = find(objects, 'Deployment', name);
      const podLabels = deployment.spec.template.metadata.labels;
      const selects = (selector: Record<string, string>) =>
        Object.entries(selector).every(([k, v]) => podLabels[k] === v);
      expect(selects(deployment.spec.selector.matchLabels)).toBe(true);
      expect(selects(find(objects, 'Service', name).spec.selector)).toBe(true);
      expect(selects(find(objects, 'PodDisruptionBudget', name).spec.selector.matchLabels)).toBe(true);
      const hpa = find(objects, 'HorizontalPodAutoscaler', name);
      expect(hpa.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name });
      expect(hpa.spec.minReplicas).toBeLessThanOrEqual(hpa.spec.maxReplicas);
      const [container] = deployment.spec.template.spec.containers;
      expect(container.image).toMatch(new RegExp(`conveyor/${service}:`));
      // The edge's probe reports only its own replica: an orchestrator outage answers 503 from every replica
      // instead of taking them all out of the Service (connection refused).
      const edge = service === 'gateway' || service === 'ingress';
      expect(container.readinessProbe.httpGet.path).toBe(edge ? '/readyz/local' : '/readyz');
      // Its own gRPC certificate (mutual TLS), never another service's.
      const tls = deployment.spec.template.spec.volumes.find((v: Spec) => v.name === 'grpc-tls');
      expect(tls.secret.secretName).toBe(`conveyor-${service}-tls`);
      expect(container.volumeMounts).toContainEqual({
        name: 'grpc-tls',
        mountPath: '/etc/conveyor/tls',
        readOnly: true,
      });
      expect(container.livenessProbe.httpGet.path).toBe('/healthz');
    },
  );

  it.each(SERVICES)(
    'probes %s so that CPU taken by run Pods does not restart it or take it out of its Service',
    (service) => {
      // bench/README.md "20 at once": at 3 s timeouts the orchestrator was killed by its liveness probe while 20
      // run Pods took the node's CPU, and the runs it carried ended resource_unavailable.
      const [container] = find(objects, 'Deployment', `conveyor-${service}`).spec.template.spec.containers;
      const { livenessProbe, readinessProbe, startupProbe } = container;
      for (const probe of [livenessProbe, readinessProbe, startupProbe])
        expect(probe.timeoutSeconds).toBeGreaterThanOrEqual(10);
      expect(livenessProbe.periodSeconds * livenessProbe.failureThreshold).toBeGreaterThanOrEqual(60);
      expect(readinessProbe.periodSeconds * readinessProbe.failureThreshold).toBeGreaterThanOrEqual(15);
    },
  );

  it('migrates with a Job on the orchestrator image', () => {
    const job = find(objects, 'Job', 'conveyor-migrate');
    const [container] = job.spec.template.spec.containers;
    expect(container.command).toEqual(['node', 'packages/db/dist/migrate-cli.js']);
    expect(container.image).toBe(
      find(objects, 'Deployment', 'conveyor-orchestrator').spec.template.spec.containers[0].image,
    );
  });

  it('routes /v1 and /console to the gateway and /webhooks to the ingress service, nothing else', () => {
    const backends = find(objects, 'Ingress', 'conveyor').spec.rules.flatMap((rule: Spec) =>
      rule.http.paths.map((p: Spec) => `${p.path} -> ${p.backend.service.name}`),
    );
    expect(backends).toEqual([
      '/v1 -> conveyor-gateway',
      '/api/v1 -> conveyor-gateway',
      '/console -> conveyor-gateway',
      '/webhooks -> conveyor-ingress',
    ]);
  });

  it('tells the gateway its public URL, so links such as session_link point where the Ingress serves it', () => {
    const configMap = objects.find(
      (o) => o.kind === 'ConfigMap' && o.metadata.name.startsWith('conveyor-config'),
    );
    const config = (configMap as Spec).data;
    const gatewayEnv = find(objects, 'Deployment', 'conveyor-gateway').spec.template.spec.containers[0].env;
    expect(gatewayEnv.map((e: Spec) => e.name)).not.toContain('PUBLIC_URL');
    expect(`${config.PUBLIC_URL}/v1`).toBe(config.PUBLIC_API_BASE_URL);
    // Served through the Ingress's host, or (the test overlay, whose clients are in the cluster) the gateway's Service.
    const hosts = find(objects, 'Ingress', 'conveyor').spec.rules.map((r: Spec) => r.host);
    expect([...hosts, `conveyor-gateway.${installedIn}.svc`]).toContain(new URL(config.PUBLIC_URL).host);
  });

  it("runs without a docker_image on the runner's own image, where the harness CLIs are", () => {
    const configMap = objects.find(
      (o) => o.kind === 'ConfigMap' && o.metadata.name.startsWith('conveyor-config'),
    );
    const runner = find(objects, 'Deployment', 'conveyor-runner').spec.template.spec.containers[0];
    // The test overlay names the same layers `conveyor/run` (scripts/kubernetes/images.sh).
    expect((configMap as Spec).data.SANDBOX_K8S_DEFAULT_IMAGE.replace('/run:', '/runner:')).toBe(
      runner.image,
    );
  });

  it('keeps the environment snapshots on a claim every runner replica mounts, and lets run Pods mount it (docs/snapshots.md)', () => {
    const pod = find(objects, 'Deployment', 'conveyor-runner').spec.template.spec;
    const [runner] = pod.containers;
    const root = runner.env.find((e: Spec) => e.name === 'WORKSPACE_ROOT').value;
    const mount = runner.volumeMounts.find((m: Spec) => m.mountPath === root);
    const volume = pod.volumes.find((v: Spec) => v.name === mount.name);
    const claim = find(objects, 'PersistentVolumeClaim', volume.persistentVolumeClaim.claimName);
    expect(runner.env).toContainEqual({ name: 'SANDBOX_K8S_SNAPSHOT_CLAIM', value: claim.metadata.name });
    // Shared by replicas on several nodes, except on the single-node development cluster.
    expect(claim.spec.accessModes).toEqual([
      installedIn === 'conveyor-dev' ? 'ReadWriteOnce' : 'ReadWriteMany',
    ]);
    expect(pod.securityContext.fsGroupChangePolicy).toBe('OnRootMismatch');
  });

  it('denies ingress traffic by default and opens only the documented paths', () => {
    const policies = objects.filter((o) => o.kind === 'NetworkPolicy') as Spec[];
    expect(policies.find((p) => p.metadata.name === 'conveyor-default-deny-ingress')?.spec).toEqual({
      podSelector: {},
      policyTypes: ['Ingress'],
    });
    const fromController = policies.filter((p) =>
      p.spec.ingress?.some((rule: Spec) =>
        (rule.from ?? []).some(
          (peer: Spec) =>
            peer.namespaceSelector?.matchLabels?.['kubernetes.io/metadata.name'] === 'ingress-nginx',
        ),
      ),
    );
    expect(
      fromController.map((p) => p.spec.podSelector.matchLabels['app.kubernetes.io/name']).sort(),
    ).toEqual(['conveyor-gateway', 'conveyor-ingress']);
    const grpc = find(objects, 'NetworkPolicy', 'conveyor-orchestrator-grpc');
    expect(grpc.spec.ingress).toEqual([
      {
        from: [
          {
            podSelector: {
              matchExpressions: [
                {
                  key: 'app.kubernetes.io/name',
                  operator: 'In',
                  values: ['conveyor-gateway', 'conveyor-ingress', 'conveyor-runner'],
                },
              ],
            },
          },
        ],
        ports: [{ protocol: 'TCP', port: 50051 }],
      },
    ]);
    // The worker endpoint is the one orchestrator port open to any source (tokens and TLS guard it).
    expect(find(objects, 'NetworkPolicy', 'conveyor-orchestrator-workers').spec.ingress).toEqual([
      { ports: [{ protocol: 'TCP', port: 50052 }] },
    ]);
  });

  it("opens the runners to run Pods on the run gateway's port alone, through a Service any replica answers", () => {
    const runner = find(objects, 'Deployment', 'conveyor-runner').spec.template.spec.containers[0];
    const port = runner.ports.find((p: Spec) => p.name === 'run-gateway').containerPort;
    const service = find(objects, 'Service', 'conveyor-runner-runs').spec;
    expect(service.selector).toEqual({ 'app.kubernetes.io/name': 'conveyor-runner' });
    // The runs' NetworkPolicies name the Pods' port: the Service's port must be the same.
    expect(service.ports).toEqual([{ name: 'run-gateway', port, targetPort: 'run-gateway' }]);
    expect(find(objects, 'NetworkPolicy', 'conveyor-runner-from-run-sandboxes').spec.ingress).toEqual([
      {
        from: [
          { podSelector: { matchExpressions: [{ key: 'conveyor.dev/run-sandbox', operator: 'Exists' }] } },
          { podSelector: { matchLabels: { 'app.kubernetes.io/name': 'conveyor-runner' } } },
        ],
        ports: [{ protocol: 'TCP', port }],
      },
    ]);
  });
});

describe('the validators catch broken manifests', () => {
  const deployment = (): Spec => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'broken' },
    spec: {
      selector: { matchLabels: { app: 'broken' } },
      template: {
        metadata: { labels: { app: 'broken' } },
        spec: {
          automountServiceAccountToken: false,
          securityContext: {
            runAsNonRoot: true,
            runAsUser: 1000,
            seccompProfile: { type: 'RuntimeDefault' },
          },
          containers: [
            {
              name: 'app',
              image: 'conveyor/gateway:1.0.0',
              resources: {
                requests: { cpu: '100m', memory: '128Mi' },
                limits: { cpu: '1', memory: '512Mi' },
              },
              securityContext: {
                allowPrivilegeEscalation: false,
                readOnlyRootFilesystem: true,
                capabilities: { drop: ['ALL'] },
              },
              readinessProbe: { httpGet: { path: '/readyz', port: 8080 } },
              livenessProbe: { httpGet: { path: '/healthz', port: 8080 } },
            },
          ],
        },
      },
    },
  });

  it('accepts the well-formed baseline', () => {
    expect(manifestErrors([deployment() as KubeObject])).toEqual([]);
  });

  it('rejects replicas: "two" (Kubernetes schema)', () => {
    const broken = deployment();
    broken.spec.replicas = 'two';
    expect(kubernetesSchemaErrors(broken as KubeObject)).toEqual(
      expect.arrayContaining([expect.stringMatching(/'\/spec\/replicas'.*integer/)]),
    );
  });

  it('rejects a field the API does not have (strict schemas)', () => {
    const broken = deployment();
    broken.spec.replicaz = 2;
    expect(kubernetesSchemaErrors(broken as KubeObject).join('\n')).toMatch(/replicaz/);
  });

  it('rejects a Deployment without a selector and a Service port without a number (Kubernetes schema)', () => {
    const broken = deployment();
    delete broken.spec.selector;
    expect(kubernetesSchemaErrors(broken as KubeObject).join('\n')).toMatch(/selector/);
    const service = {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 's' },
      spec: { ports: [{ name: 'http' }] },
    };
    expect(kubernetesSchemaErrors(service).join('\n')).toMatch(/port/);
  });

  it('rejects an unknown apiVersion or kind', () => {
    expect(
      kubernetesSchemaErrors({ apiVersion: 'apps/v1', kind: 'Deploymnet', metadata: { name: 'x' } }),
    ).toEqual([expect.stringMatching(/could not find schema for Deploymnet/)]);
  });

  it('rejects a container without image, resources or probes, running as root, with a literal secret (policy)', () => {
    const broken = deployment();
    const container = broken.spec.template.spec.containers[0];
    delete container.image;
    delete container.resources.limits;
    container.readinessProbe.httpGet.path = '/healthz';
    container.env = [{ name: 'DATABASE_URL', value: 'postgresql://user:password@db/conveyor' }];
    broken.spec.template.spec.securityContext.runAsNonRoot = false;
    const errors = policyErrors(broken as KubeObject).join('\n');
    expect(errors).toMatch(/containers\/0 must have required property 'image'/);
    expect(errors).toMatch(/resources must have required property 'limits'/);
    expect(errors).toMatch(/readinessProbe\/httpGet\/path must be equal to one of the allowed values/);
    expect(errors).toMatch(/env\/0 must have required property 'valueFrom'/);
    expect(errors).toMatch(/runAsNonRoot must be equal to constant/);
  });

  it('rejects :latest images and committed Secrets (policy)', () => {
    const latest = deployment();
    latest.spec.template.spec.containers[0].image = 'conveyor/gateway:latest';
    expect(policyErrors(latest as KubeObject).join('\n')).toMatch(/image must NOT be valid/);
    expect(
      policyErrors({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'conveyor-secrets' } }),
    ).toHaveLength(1);
  });
});
