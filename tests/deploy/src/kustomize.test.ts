import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { configMapHash, kustomizeBuild, KustomizeError, type KubeObject } from './kustomize';

describe('kustomizeBuild (the hand-written renderer)', () => {
  let dir: string;
  const write = (file: string, text: string) => {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), text);
  };

  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'kustomize-'));
    write(
      'base/app.yaml',
      `apiVersion: apps/v1
kind: Deployment
metadata: {name: app}
spec:
  selector: {matchLabels: {app: app}}
  template:
    metadata: {labels: {app: app}}
    spec:
      containers:
        - name: a
          image: example/app
          envFrom: [{configMapRef: {name: settings}}]
          env: [{name: A, value: '1'}, {name: B, value: '2'}, {name: C, value: '3'}]
        - name: b
          image: example/sidecar:1.0
`,
    );
    write(
      'base/kustomization.yaml',
      `resources: [app.yaml]
configMapGenerator:
  - name: settings
    literals: [A=1]
`,
    );
  });

  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("suffixes generated ConfigMaps with kustomize's content hash and rewrites references to them", () => {
    // The value `kubectl kustomize` (kustomize v5.5) prints for this ConfigMap.
    expect(configMapHash({ A: '1' })).toBe('89g4tffbfk');
    const [deployment, configMap] = kustomizeBuild(path.join(dir, 'base')) as [KubeObject, KubeObject];
    expect(configMap.metadata.name).toBe('settings-89g4tffbfk');
    expect(JSON.stringify(deployment)).toContain('"configMapRef":{"name":"settings-89g4tffbfk"}');
  });

  it('applies overlays: merge generators, strategic-merge patches, namespace, labels and images', () => {
    write(
      'overlay/kustomization.yaml',
      `namespace: team
resources: [../base]
labels:
  - pairs: {tier: backend}
    includeTemplates: true
images:
  - {name: example/app, newName: registry.local/app, newTag: '2.0'}
configMapGenerator:
  - {name: settings, behavior: merge, literals: [B=2]}
patches:
  - path: patch.yaml
`,
    );
    write(
      'overlay/patch.yaml',
      `apiVersion: apps/v1
kind: Deployment
metadata: {name: app}
spec:
  template:
    spec:
      containers:
        - name: c
          image: example/new:1
        - name: a
          env: [{name: D, value: '4'}, {name: B, value: '22'}]
`,
    );
    const [deployment, configMap] = kustomizeBuild(path.join(dir, 'overlay')) as [KubeObject, KubeObject];
    // Names and order below are what `kubectl kustomize` prints for this overlay.
    expect(configMap.metadata).toEqual({
      name: 'settings-66h9cbh964',
      namespace: 'team',
      labels: { tier: 'backend' },
    });
    expect(deployment.metadata).toEqual({ name: 'app', namespace: 'team', labels: { tier: 'backend' } });
    const template = (
      deployment.spec as {
        template: { metadata: unknown; spec: { containers: Array<Record<string, unknown>> } };
      }
    ).template;
    expect(template.metadata).toEqual({ labels: { app: 'app', tier: 'backend' } });
    // kyaml's order: the patch's elements (merged) first, then the untouched originals.
    expect(template.spec.containers.map((c) => [c.name, c.image])).toEqual([
      ['c', 'example/new:1'],
      ['a', 'registry.local/app:2.0'],
      ['b', 'example/sidecar:1.0'],
    ]);
    expect(template.spec.containers[1]!.env).toEqual([
      { name: 'D', value: '4' },
      { name: 'B', value: '22' },
      { name: 'A', value: '1' },
      { name: 'C', value: '3' },
    ]);
  });

  it('refuses kustomize features it does not implement instead of ignoring them', () => {
    write('overlay/kustomization.yaml', 'resources: [../base]\nnamePrefix: x-\n');
    expect(() => kustomizeBuild(path.join(dir, 'overlay'))).toThrow(KustomizeError);
    expect(() => kustomizeBuild(path.join(dir, 'overlay'))).toThrow(
      /unsupported kustomization field "namePrefix"/,
    );
    write('overlay/kustomization.yaml', 'resources: [../base]\npatches: [{path: missing-target.yaml}]\n');
    write(
      'overlay/missing-target.yaml',
      'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: nope}\nspec: {}\n',
    );
    expect(() => kustomizeBuild(path.join(dir, 'overlay'))).toThrow(/matches 0 resources/);
  });
});
