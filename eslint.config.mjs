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

/** Services talk through gRPC and Kafka only: never another service's package, by name or by path. */
const serviceBoundaries = SERVICES.map((service) => ({
  files: [`services/${service}/**/*.{ts,tsx}`],
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: [
          { group: ['@conveyor/*/src/*'], message: 'Import packages by name, not their sources.' },
          {
            group: SERVICES.filter((s) => s !== service)
              .map((s) => `@conveyor/${s}`)
              .concat(SERVICES.filter((s) => s !== service).map((s) => `@conveyor/${s}/*`)),
            message: 'Services never import each other: talk through gRPC or Kafka.',
          },
        ],
      },
    ],
  },
}));

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
      'import-x/no-restricted-paths': [
        'error',
        {
          zones: [
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
          ],
        },
      ],
      // Type-aware: an unawaited promise loses its error (the process's unhandled-rejection handler is not a plan).
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  ...serviceBoundaries,
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
