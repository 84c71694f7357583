// Writes docs/settings.md from the zod schemas the services parse their environment with (the one source of every
// setting's type, default, bounds and `.describe()` text). `--check` writes nothing and exits 1 when the file is stale
// or a setting has no description; tests/deploy runs it in `npm test`. Reads the built services (`npx turbo run build`).
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
const OUTPUT = path.join(ROOT, 'docs/settings.md');

/** Every program that reads its environment through a schema, in the order an operator meets them. */
const programs = () => {
  const { gatewaySettings } = require('@conveyor/gateway');
  const { ingressSettings } = require('@conveyor/ingress');
  const { orchestratorSettings, cliSettings } = require('@conveyor/orchestrator');
  const { runnerSettings, workerSettings } = require('@conveyor/runner');
  return [
    ['orchestrator', 'services/orchestrator', orchestratorSettings],
    ['gateway', 'services/gateway', gatewaySettings],
    ['ingress', 'services/ingress', ingressSettings],
    ['runner', 'services/runner, the BullMQ runner pool', runnerSettings],
    ['worker', 'services/runner, the self-hosted worker program (docs/workers.md)', workerSettings],
    ['conveyor CLI', 'the admin CLI (`npm run conveyor -- …`, services/orchestrator/src/cli)', cliSettings],
  ];
};

/** Peels defaults, optionals, transforms and pipes off a setting: its description, default and base type. */
function unwrap(schema) {
  const found = { description: undefined, default: undefined, optional: false, output: undefined };
  let node = schema;
  for (;;) {
    found.description ??= node.description;
    const def = node._def;
    if (def.typeName === 'ZodDefault') {
      found.default ??= def.defaultValue;
      node = def.innerType;
    } else if (def.typeName === 'ZodOptional') {
      found.optional = true;
      node = def.innerType;
    } else if (def.typeName === 'ZodEffects') node = def.schema;
    else if (def.typeName === 'ZodPipeline') {
      found.output ??= def.out;
      node = def.in;
    } else return { ...found, base: node };
  }
}

const code = (value) => `\`${value}\``;

/** Settings that hold a credential: keys, secrets, passwords, tokens (not sizes such as AUTH_CACHE_MAX_KEYS). */
const SECRET_NAME = /_(SECRET|KEY|KEYS|PASSWORD|TOKEN)$/;

/** A default as an operator would write it; machine-dependent parts named rather than printed. */
function renderDefault(defaultValue) {
  const first = defaultValue();
  // Computed per process (RUNNER_ID): two evaluations disagree.
  if (JSON.stringify(first) !== JSON.stringify(defaultValue())) return 'unique per process';
  const text = String(first);
  if (text === '') return '(empty)';
  if (text.startsWith(os.tmpdir() + path.sep)) return code(`$TMPDIR/${text.slice(os.tmpdir().length + 1)}`);
  return code(text);
}

function describeBase(base) {
  const def = base._def;
  const bounds = [];
  switch (def.typeName) {
    case 'ZodString': {
      let type = 'string';
      for (const check of def.checks) {
        if (check.kind === 'url') type = 'URL';
        else if (check.kind === 'min' && check.value > 1) bounds.push(`at least ${check.value} characters`);
        else if (check.kind === 'regex') bounds.push(`matches ${code(check.regex.source)}`);
      }
      return { type, bounds };
    }
    case 'ZodNumber': {
      const integer = def.checks.some((c) => c.kind === 'int');
      for (const check of def.checks) {
        if (check.kind === 'min') bounds.push(`${check.inclusive ? '≥' : '>'} ${check.value}`);
        if (check.kind === 'max') bounds.push(`${check.inclusive ? '≤' : '<'} ${check.value}`);
      }
      return { type: integer ? 'integer' : 'number', bounds };
    }
    case 'ZodEnum':
      if (def.values.join() === 'true,false') return { type: 'boolean (`true`, `false`)', bounds };
      return { type: 'one of ' + def.values.map((v) => (v === '' ? '(empty)' : code(v))).join(', '), bounds };
    default:
      throw new Error(`settings-reference: no rendering for ${def.typeName}`);
  }
}

/** What a pipe's output adds: the allowed items of a list. */
function describeOutput(output) {
  if (output?._def.typeName !== 'ZodArray') return [];
  const item = output._def.type._def;
  const bounds = [];
  if (item.typeName === 'ZodEnum') bounds.push(`each one of ${item.values.map(code).join(', ')}`);
  if (output._def.minLength) bounds.push(`at least ${output._def.minLength.value} item(s)`);
  return bounds;
}

const cell = (text) => text.replace(/\|/g, '\\|').replace(/\s+/g, ' ').trim();

const shapeOf = (schema) => (schema._def.typeName === 'ZodEffects' ? schema._def.schema.shape : schema.shape);

/** Settings more than one program reads (each must be set alike where they name the same thing, e.g. REDIS_URL). */
function sharedSettings(all) {
  const readers = new Map();
  for (const [name, , schema] of all)
    for (const key of Object.keys(shapeOf(schema))) readers.set(key, [...(readers.get(key) ?? []), name]);
  return [...readers]
    .filter(([, names]) => names.length > 1)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key, names]) => `| ${code(key)} | ${names.join(', ')} |`);
}

function render() {
  const missing = [];
  const builtInSecrets = [];
  const all = programs();
  const sections = all.map(([name, where, schema]) => {
    const shape = shapeOf(schema);
    const rows = Object.entries(shape)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([key, setting]) => {
        const found = unwrap(setting);
        if (!found.description) missing.push(`${name}: ${key}`);
        if (SECRET_NAME.test(key) && found.base._def.typeName === 'ZodString' && found.default?.())
          builtInSecrets.push(`${name}: ${key}`);
        const { type, bounds } = describeBase(found.base);
        const fallback = found.default
          ? renderDefault(found.default)
          : found.optional
            ? '(unset)'
            : '**required**';
        const allBounds = [...bounds, ...describeOutput(found.output)].join('; ') || '—';
        return `| ${code(key)} | ${cell(type)} | ${cell(fallback)} | ${cell(allBounds)} | ${cell(found.description ?? '')} |`;
      });
    return [
      `## ${name}`,
      '',
      `Read by ${where}: ${rows.length} settings.`,
      '',
      '| setting | type | default | bounds | what it does |',
      '| --- | --- | --- | --- | --- |',
      ...rows,
      '',
    ].join('\n');
  });
  const text = [
    '# Settings reference',
    '',
    "<!-- Generated by scripts/settings-reference.js from the services' zod schemas; edit the `.describe()` texts there",
    '     and run `npm run docs:settings`. `npm test` (tests/deploy) fails when this file is stale. -->',
    '',
    'Every environment variable each program reads, as its configuration schema parses it at start: a value outside',
    'its type or bounds stops the program with every problem listed. Where a deployment path sets a value (`npm start`,',
    '`docker-compose.yml`, `k8s/`), that is said in `deploy/README.md`; conditional rules (for example `S3_BUCKET` with',
    '`BLOB_STORE=s3`) are in the descriptions.',
    '',
    '## Read by more than one program',
    '',
    'Each program reads its own environment: where these name the same server or queue, set them alike.',
    '',
    '| setting | read by |',
    '| --- | --- |',
    ...sharedSettings(all),
    '',
    ...sections,
  ].join('\n');
  return { text, missing, builtInSecrets };
}

const { text, missing, builtInSecrets } = render();
// A key or password with a default would be the same, public value in every installation that forgot to set it.
if (builtInSecrets.length > 0) {
  console.error(`secrets with a built-in default (there must be none):\n  ${builtInSecrets.join('\n  ')}`);
  process.exit(1);
}
if (missing.length > 0) {
  console.error(`settings without a .describe() text:\n  ${missing.join('\n  ')}`);
  process.exit(1);
}
if (process.argv.includes('--check')) {
  const current = fs.existsSync(OUTPUT) ? fs.readFileSync(OUTPUT, 'utf8') : '';
  if (current !== text) {
    console.error('docs/settings.md is stale: run `npm run docs:settings`');
    process.exit(1);
  }
} else {
  fs.writeFileSync(OUTPUT, text);
  console.error(`wrote ${path.relative(ROOT, OUTPUT)}`);
}
