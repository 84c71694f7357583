// Renders the kustomize base k8s/base from the Helm chart k8s/chart with the values k8s/values/base.yaml, so the
// chart is the one source of the Kubernetes manifests: `npm run k8s:render` writes it; `--check` writes nothing and
// exits 1 naming each file that differs (tests/deploy runs it in `npm test`); `--out DIR` renders into DIR instead.
// Each template becomes one file of the base. The ConfigMap conveyor-config becomes the base's configMapGenerator, so
// the overlays merge their settings into it and its name keeps carrying a hash of its content (a change rolls the
// pods, as the chart's checksum annotation does under Helm). Needs helm (scripts/lib/deploy-tools.sh).
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const YAML = require('yaml');

const ROOT = path.resolve(__dirname, '..');
const CHART = path.join(ROOT, 'k8s/chart');
const VALUES = path.join(ROOT, 'k8s/values/base.yaml');
const TOOLS_DIR = process.env.CONVEYOR_TOOLS_DIR ?? path.join(os.homedir(), '.cache/conveyor/tools');
const HEADER =
  '# Rendered from k8s/chart by `npm run k8s:render` (values k8s/values/base.yaml): edit the chart, not this file.\n';

/** helm's output split at its `# Source: conveyor/templates/FILE` markers: [file, document text] in order. */
function renderedDocuments() {
  const helm = path.join(TOOLS_DIR, 'bin/helm');
  const out = execFileSync(helm, ['template', 'conveyor', CHART, '--values', VALUES], {
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
  return out
    .split(/^---\n/m)
    .filter((doc) => doc.trim())
    .map((doc) => {
      const source = /^# Source: conveyor\/templates\/(\S+)\n/.exec(doc);
      if (!source) throw new Error(`a rendered document without its template's name:\n${doc.slice(0, 200)}`);
      return [source[1], doc.slice(source[0].length)];
    });
}

// helm prints objects in its install order (by kind); a file of the base lists them as its template does, the workload
// first, so the template's opening comment stays above what it describes.
const KIND_ORDER = [
  'ServiceAccount',
  'Role',
  'RoleBinding',
  'NetworkPolicy',
  'Deployment',
  'Service',
  'HorizontalPodAutoscaler',
  'PodDisruptionBudget',
];
const rank = (kind) => (KIND_ORDER.includes(kind) ? KIND_ORDER.indexOf(kind) : KIND_ORDER.length);

/** The base's files, by name, as they must be on disk. */
function renderBase() {
  const files = new Map();
  let config;
  const documents = renderedDocuments().map(([file, doc]) => [file, doc, YAML.parse(doc)]);
  documents.sort(([, , a], [, , b]) => rank(a.kind) - rank(b.kind)); // stable: the rest keep helm's order
  for (const [file, doc, object] of documents) {
    if (object.kind === 'ConfigMap' && object.metadata.name === 'conveyor-config') {
      config = object;
      continue;
    }
    files.set(file, files.has(file) ? `${files.get(file)}---\n${doc}` : doc);
  }
  if (!config) throw new Error('the chart rendered no ConfigMap conveyor-config');
  const kustomization = {
    apiVersion: 'kustomize.config.k8s.io/v1beta1',
    kind: 'Kustomization',
    resources: [...files.keys()],
    configMapGenerator: [
      {
        name: 'conveyor-config',
        options: { labels: config.metadata.labels },
        literals: Object.entries(config.data).map(([key, value]) => `${key}=${value}`),
      },
    ],
  };
  const result = new Map([...files].map(([file, text]) => [file, HEADER + text]));
  result.set(
    'kustomization.yaml',
    `${HEADER}# The settings are the chart's ConfigMap conveyor-config as a generator: overlays merge into it (behavior: merge).\n` +
      YAML.stringify(kustomization, { lineWidth: 0 }),
  );
  return result;
}

function main() {
  const args = process.argv.slice(2);
  const check = args.includes('--check');
  const outIndex = args.indexOf('--out');
  const dir = outIndex >= 0 ? path.resolve(args[outIndex + 1]) : path.join(ROOT, 'k8s/base');
  const base = renderBase();
  const present = fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith('.yaml')) : [];
  if (check) {
    const stale = [
      ...[...base]
        .filter(
          ([file, text]) => !present.includes(file) || fs.readFileSync(path.join(dir, file), 'utf8') !== text,
        )
        .map(([file]) => file),
      ...present.filter((file) => !base.has(file)),
    ];
    if (stale.length) {
      process.stderr.write(
        `${path.relative(ROOT, dir)} differs from the chart in: ${stale.join(', ')}; run \`npm run k8s:render\`\n`,
      );
      process.exit(1);
    }
    return;
  }
  fs.mkdirSync(dir, { recursive: true });
  for (const file of present.filter((f) => !base.has(f))) fs.rmSync(path.join(dir, file));
  for (const [file, text] of base) fs.writeFileSync(path.join(dir, file), text);
}

main();
