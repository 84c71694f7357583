import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

// Each guardrail of `npm run lint` is shown to fail on a fixture that breaks it, with the repository's own
// eslint.config.mjs and .prettierrc.json: a rule that silently checks nothing (no-cycle without a TypeScript
// resolver did) fails here.
const ROOT = path.resolve(__dirname, '../../..');
const ESLINT = path.join(ROOT, 'node_modules/eslint/bin/eslint.js');
const PRETTIER = path.join(ROOT, 'node_modules/prettier/bin/prettier.cjs');

interface LintMessage {
  ruleId: string | null;
  message: string;
  line: number;
}

/** Lints `code` as if it were the file at `file` (relative to the repository root), with the repository's config. */
async function lintAs(file: string, code: string): Promise<LintMessage[]> {
  return lint(['--stdin', '--stdin-filename', file], code);
}

/** `cwd`: where ESLint runs (a workspace's `npm run lint` runs it in the workspace, `npm run lint` at the root). */
async function lint(args: string[], stdin?: string, cwd = ROOT): Promise<LintMessage[]> {
  // ESLint exits 1 when it reports problems: the JSON on stdout is the answer either way.
  const running = promisify(execFile)(
    process.execPath,
    [ESLINT, '--format', 'json', '--no-ignore', ...args],
    {
      cwd,
      maxBuffer: 16 * 1024 * 1024,
    },
  );
  running.child.stdin?.end(stdin ?? '');
  const { stdout } = await running.catch((err: { stdout?: string }) => ({ stdout: err.stdout ?? '' }));
  const results = JSON.parse(stdout) as Array<{ messages: LintMessage[] }>;
  return results.flatMap((r) => r.messages);
}

// Every lint is a fresh ESLint process building the type-aware TypeScript program of the workspace (several seconds
// alone, tens of seconds on a busy 2-core CI machine beside the Kubernetes suite; one test runs two).
jest.setTimeout(120_000);

const rules = (messages: LintMessage[]) => messages.map((m) => m.ruleId);

/** A module that imports `name` from `from` and uses it. */
const importing = (name: string, from: string) =>
  `import { ${name} } from '${from}';\n\nexport const used = ${name};\n`;

describe('lint guardrails', () => {
  it('pass a domain file that imports downwards only', async () => {
    const messages = await lintAs(
      'services/orchestrator/src/runs/guardrail-fixture.ts',
      importing('ModelCatalog', '../catalog/model-catalog'),
    );
    expect(messages).toEqual([]);
  });

  it('refuse an orchestrator domain folder importing the gRPC transport', async () => {
    const messages = await lintAs(
      'services/orchestrator/src/runs/guardrail-fixture.ts',
      "import { requireCaller } from '../grpc/require-caller';\n\nexport const check = requireCaller;\n",
    );
    expect(rules(messages)).toContain('import-x/no-restricted-paths');
  });

  it('refuse an orchestrator domain file taking a wire type from @conveyor/proto', async () => {
    const messages = await lintAs(
      'services/orchestrator/src/runs/guardrail-fixture.ts',
      "import type { Caller__Output } from '@conveyor/proto';\n\nexport const teamOf = (c: Caller__Output) => c.team_id;\n",
    );
    expect(rules(messages)).toContain('no-restricted-imports');
  });

  // One lint per case: each is a type-aware ESLint run of several seconds on a busy machine.
  it.each([
    ['services/gateway/src/openapi/guardrail-fixture.ts', '../schemas/run-request-schemas', 'createRunBody'],
    ['services/runner/src/harness/guardrail-fixture.ts', '../sandbox/run-environment', 'HOME_DIR_NAME'],
  ])('pass %s importing %s (a floor below)', async (file, from, name) => {
    const messages = await lintAs(file, importing(name, from));
    expect(messages).toEqual([]);
  });

  it.each([
    ['services/gateway/src/routes/guardrail-fixture.ts', '../openapi/api-document', 'buildApiDocument'],
    ['services/gateway/src/openapi/guardrail-fixture.ts', '../app', 'buildApp'],
    ['services/gateway/src/routes/guardrail-fixture.ts', '../app', 'buildApp'],
    ['services/gateway/src/middleware/guardrail-fixture.ts', '../openapi/api-document', 'buildApiDocument'],
    ['services/runner/src/sandbox/guardrail-fixture.ts', '../run-executor', 'RunExecutor'],
    ['services/runner/src/harness/guardrail-fixture.ts', '../model-proxy/model-proxy', 'ModelProxy'],
    ['services/runner/src/guardrail-fixture.ts', './runner', 'Runner'],
  ])('refuse %s importing %s (a floor above)', async (file, from, name) => {
    const messages = await lintAs(file, importing(name, from));
    expect(rules(messages)).toContain('import-x/no-restricted-paths');
  });

  it('refuse an upward import when ESLint runs inside the workspace (its own npm run lint)', async () => {
    const messages = await lint(
      ['--stdin', '--stdin-filename', 'src/sandbox/guardrail-fixture.ts'],
      importing('RunExecutor', '../run-executor'),
      path.join(ROOT, 'services/runner'),
    );
    expect(rules(messages)).toContain('import-x/no-restricted-paths');
  });

  it('refuse a service importing another service, by package name or by path', async () => {
    const byName = await lintAs(
      'services/gateway/src/guardrail-fixture.ts',
      "import { startOrchestrator } from '@conveyor/orchestrator';\n\nexport const start = startOrchestrator;\n",
    );
    expect(rules(byName)).toContain('no-restricted-imports');
    const byPath = await lintAs(
      'services/gateway/src/guardrail-fixture.ts',
      "import { loadConfig } from '../../orchestrator/src/config';\n\nexport const load = loadConfig;\n",
    );
    expect(rules(byPath)).toContain('import-x/no-restricted-paths');
  });

  it('refuse a package importing a service', async () => {
    const messages = await lintAs(
      'packages/errors/src/guardrail-fixture.ts',
      "import { loadConfig } from '@conveyor/runner';\n\nexport const load = loadConfig;\n",
    );
    expect(rules(messages)).toContain('no-restricted-imports');
  });

  it('refuse an import cycle', async () => {
    const messages = await lint([
      'tests/guardrails/fixtures/cycle/first.ts',
      'tests/guardrails/fixtures/cycle/second.ts',
    ]);
    expect(rules(messages).filter((r) => r === 'import-x/no-cycle')).toHaveLength(2);
  });

  it('refuse an unawaited promise (type-aware)', async () => {
    const messages = await lint(['tests/guardrails/fixtures/promises/floating.ts']);
    expect(rules(messages)).toEqual(['@typescript-eslint/no-floating-promises']);
  });

  it('refuse a timer that floats a promise (void or async callback), not one that handles it', async () => {
    const messages = await lint(['tests/guardrails/fixtures/promises/floating-timer.ts']);
    expect(messages.map((m) => [m.ruleId, m.line])).toEqual([
      ['no-restricted-syntax', 6],
      ['no-restricted-syntax', 9],
    ]);
    expect(messages[0]!.message).toContain('BackgroundLoop');
  });

  it('refuse code Prettier would change', async () => {
    const formatted = async (code: string) => {
      const running = promisify(execFile)(
        process.execPath,
        [PRETTIER, '--stdin-filepath', 'services/runner/src/guardrail-fixture.ts'],
        { cwd: ROOT },
      );
      running.child.stdin?.end(code);
      return (await running).stdout;
    };
    const unformatted = 'export const greeting = "hello"\n';
    expect(await formatted(unformatted)).not.toBe(unformatted);
    const clean = "export const greeting = 'hello';\n";
    expect(await formatted(clean)).toBe(clean);
  });
});
