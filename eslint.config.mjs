import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import importX from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';

const SERVICES = ['gateway', 'orchestrator', 'ingress', 'runner'];
const ORCHESTRATOR_DOMAIN = [
  'artifacts',
  'auth',
  'automations',
  'blobs',
  'catalog',
  'definitions',
  'deliveries',
  'egress',
  'factories',
  'identities',
  'runner',
  'runs',
  'schedules',
  'scores',
  'secrets',
  'webhooks',
  'workers',
];

/**
 * Who may import whom across the repository: packages below services, services apart, the orchestrator's domain
 * below its transport.
 */
const boundaryZones = [
  {
    // The orchestrator's transport (gRPC handlers, their auth and error mapping) sits on top of its domain.
    target: ORCHESTRATOR_DOMAIN.map((f) => `./services/orchestrator/src/${f}`),
    from: './services/orchestrator/src/grpc',
    message: 'Domain folders never import the transport (docs/architecture.md).',
  },
  { target: './packages', from: './services', message: 'Packages never import services.' },
  ...SERVICES.map((service) => ({
    target: `./services/${service}`,
    from: SERVICES.filter((s) => s !== service).map((s) => `./services/${s}`),
    message: 'Services never import each other: talk through gRPC or Kafka.',
  })),
];

const gateway = (paths) => paths.map((p) => `./services/gateway/src/${p}`);
const runner = (paths) => paths.map((p) => `./services/runner/src/${p}`);
const GATEWAY_ROOTS = gateway(['main.ts', 'gateway.ts', 'app.ts']);
const GATEWAY_BELOW_OPENAPI = gateway([
  'schemas',
  'middleware',
  'auth',
  'mappers',
  'console',
  'validation.ts',
  'orchestrator-api.ts',
  'config.ts',
]);

/**
 * The gateway's and the runner's floors (docs/architecture.md), for their production code: a test may build the
 * whole app or reach across floors to set a scene.
 */
const layerZones = [
  {
    target: gateway(['routes']),
    from: [...GATEWAY_ROOTS, ...gateway(['openapi'])],
    message:
      'Gateway routes never import the app, its composition root or the OpenAPI document (docs/architecture.md).',
  },
  {
    target: gateway(['openapi']),
    from: GATEWAY_ROOTS,
    message:
      'The OpenAPI document reads the endpoint table of routes/, never the app (docs/architecture.md).',
  },
  {
    target: GATEWAY_BELOW_OPENAPI,
    from: [...GATEWAY_ROOTS, ...gateway(['routes', 'openapi'])],
    message:
      'Gateway schemas, middleware, auth and mappers never import routes, the OpenAPI document or the app (docs/architecture.md).',
  },
  {
    // The runner's two programs (the BullMQ pool and the self-hosted worker) stand on top and apart.
    target: runner(['sandbox', 'harness', 'model-proxy', '!(main|worker-main).ts']),
    from: runner(['runner.ts', 'self-hosted-worker.ts']),
    message:
      'Nothing in the runner imports its programs, and they do not import each other (docs/architecture.md).',
  },
  {
    // The execution (run-executor.ts, its parts in execution/ and the files beside it) uses the sandbox, harnesses and
    // model proxy, never the reverse; the ground-floor links to the platform and the redactor may be used by all.
    target: runner(['sandbox', 'harness', 'model-proxy']),
    from: runner(['*.ts', 'execution/**']),
    except: ['**/services/runner/src/{orchestrator-link,harness-support-client,secret-redactor}.ts'],
    message:
      "The runner's sandbox, harnesses and model proxy never import the execution, the programs or their config (docs/architecture.md).",
  },
  {
    target: runner(['sandbox']),
    from: runner(['harness', 'model-proxy']),
    message:
      "The sandbox is the runner's ground floor: it never imports the harnesses or the model proxy (docs/architecture.md).",
  },
  {
    target: runner(['harness']),
    from: runner(['model-proxy']),
    message:
      'Harnesses are handed their model access; they never import the model proxy (docs/architecture.md).',
  },
];

/**
 * A timer whose callback floats a promise ends the process when the promise rejects (a database restart did: issue 24).
 * `no-floating-promises` lets `void promise` through by design, so timers get their own rule: no async callback, no
 * `void` on a call unless it is a `.catch(…)`. Periodic work runs on BackgroundLoop (@conveyor/runtime), which owns
 * the timer, catches, backs off and logs an outage once.
 */
const FLOATING_TIMER_MESSAGE =
  'A timer callback must not float a promise (a rejection ends the process): run periodic work on BackgroundLoop from @conveyor/runtime, or handle the promise with .catch().';
const TIMER = 'CallExpression[callee.name=/^(setInterval|setTimeout)$/]';
const noFloatingTimers = [
  { selector: `${TIMER} > :function[async=true]`, message: FLOATING_TIMER_MESSAGE },
  {
    selector: `${TIMER} > :function UnaryExpression[operator='void'] > CallExpression:not([callee.property.name='catch'])`,
    message: FLOATING_TIMER_MESSAGE,
  },
];

/** Services talk through gRPC and Kafka only: never another service's package, by name or by path. */
const servicePatterns = (service) => [
  { group: ['@conveyor/*/src/*'], message: 'Import packages by name, not their sources.' },
  {
    group: SERVICES.filter((s) => s !== service)
      .map((s) => `@conveyor/${s}`)
      .concat(SERVICES.filter((s) => s !== service).map((s) => `@conveyor/${s}/*`)),
    message: 'Services never import each other: talk through gRPC or Kafka.',
  },
];
const serviceBoundaries = SERVICES.map((service) => ({
  files: [`services/${service}/**/*.{ts,tsx}`],
  rules: { 'no-restricted-imports': ['error', { patterns: servicePatterns(service) }] },
}));

/** The orchestrator's domain speaks its own types; grpc/ maps the wire onto them, the composition root wires both. */
const orchestratorWireTypes = {
  files: ['services/orchestrator/src/**/*.ts'],
  ignores: [
    'services/orchestrator/src/grpc/**',
    'services/orchestrator/src/orchestrator.ts',
    'services/orchestrator/src/main.ts',
    '**/*.test.ts',
    'services/orchestrator/src/test-support/**',
  ],
  rules: {
    'no-restricted-imports': [
      'error',
      {
        paths: [
          {
            name: '@conveyor/proto',
            message: 'Only grpc/ and the composition root use wire types: take or return a domain type.',
          },
        ],
        patterns: servicePatterns('orchestrator'),
      },
    ],
  },
};

export default tseslint.config(
  {
    ignores: [
      '**/dist/**',
      '**/src/generated/**',
      '**/src/gen/**',
      '**/node_modules/**',
      '**/*.js',
      '**/*.mjs',
      '**/*.cjs',
      'tests/guardrails/fixtures/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    plugins: { 'import-x': importX },
    languageOptions: {
      parserOptions: {
        projectService: {
          // tests/guardrails lints code as if it stood at these (never existing) paths.
          allowDefaultProject: [
            'packages/db/prisma.config.ts',
            'services/*/src/guardrail-fixture.ts',
            'services/*/src/*/guardrail-fixture.ts',
            'packages/*/src/guardrail-fixture.ts',
          ],
        },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    settings: {
      // Without a TypeScript parser and resolver for the imported files, import-x follows nothing and no-cycle /
      // no-restricted-paths check nothing (tests/guardrails proves they fire).
      'import-x/extensions': importX.flatConfigs.typescript.settings['import-x/extensions'],
      'import-x/parsers': importX.flatConfigs.typescript.settings['import-x/parsers'],
      'import-x/resolver-next': [
        createTypeScriptImportResolver({
          project: [
            'packages/*/tsconfig.json',
            'services/*/tsconfig.json',
            'tests/*/tsconfig.json',
            'bench/tsconfig.json',
          ],
        }),
      ],
    },
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['@conveyor/*/src/*'], message: 'Import packages by name, not their sources.' },
          ],
        },
      ],
      'import-x/no-cycle': 'error',
      'import-x/no-restricted-paths': ['error', { zones: boundaryZones, basePath: import.meta.dirname }],
      // Type-aware: an unawaited promise loses its error (the process's unhandled-rejection handler is not a plan).
      '@typescript-eslint/no-floating-promises': 'error',
      'no-restricted-syntax': ['error', ...noFloatingTimers],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  ...serviceBoundaries,
  orchestratorWireTypes,
  {
    // The one timer allowed to start a promise: BackgroundLoop's own, whose pass catches everything.
    files: ['packages/runtime/src/background-loop.ts'],
    rules: { 'no-restricted-syntax': 'off' },
  },
  {
    files: ['services/gateway/src/**/*.ts', 'services/runner/src/**/*.ts'],
    ignores: ['**/*.test.ts', 'services/gateway/src/test-support/**'],
    rules: {
      'import-x/no-restricted-paths': [
        'error',
        { zones: [...boundaryZones, ...layerZones], basePath: import.meta.dirname },
      ],
    },
  },
  {
    files: ['packages/**/*.{ts,tsx}'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['@conveyor/*/src/*'], message: 'Import packages by name, not their sources.' },
            {
              group: SERVICES.flatMap((s) => [`@conveyor/${s}`, `@conveyor/${s}/*`]),
              message: 'Packages never import services.',
            },
          ],
        },
      ],
    },
  },
);
