import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { Client } from 'pg';
import ts from 'typescript';
import { createTestDatabase, type TestDatabase } from '@conveyor/testing';
import { pendingEntries } from './runs/outbox-relay';
import type { RunListFilters } from './runs/run-list-filters';
import { artifactProbe, pageQuery } from './runs/run-list-sql';

/**
 * Prisma type-checks its model queries, not raw SQL: a column renamed in schema.prisma and its migration passes
 * typecheck and the drift test, then breaks at run time. This check finds every raw statement in the orchestrator's
 * production code (tagged `$queryRaw`/`$executeRaw` templates, and the `*_SQL` constants sent through `sqlPool`) and
 * has PostgreSQL parse and plan each (PREPARE) against the fully migrated schema, which the drift test holds equal to
 * schema.prisma: every table, column, type and cast must exist.
 */

const SRC = __dirname;
const RAW_TAGS = new Set(['$queryRaw', '$executeRaw']);

/**
 * Raw statements assembled from Prisma.Sql fragments at run time, each with the integration test that runs it over
 * real PostgreSQL (the builders of the hot ones are also prepared below, with every fragment switched on).
 */
const BUILT_AT_RUN_TIME: Record<string, string> = {
  // The report queue's statements name their table (SlackPost, LinearReport, GitHubAppReport) at run time.
  'integrations/report-queue.ts: this.claimSql': 'integrations/report-queue.int.test.ts',
  'integrations/report-queue.ts: process': 'integrations/report-queue.int.test.ts',
  'integrations/report-queue.ts: settle': 'integrations/report-queue.int.test.ts',
  // pageIds' `sql`: pageQuery's.
  'runs/list-runs.ts: sql': 'runs/list-runs.int.test.ts',
  'runs/list-runs.ts: artifactProbe': 'runs/list-runs.int.test.ts',
  'runs/outbox-relay.ts: pendingEntries': 'runs/run-engine.int.test.ts',
  'secrets/reencrypt-secrets.ts: readBatch': 'cli/key-rotation.int.test.ts',
  'secrets/reencrypt-secrets.ts: replace': 'cli/key-rotation.int.test.ts',
  'secrets/reencrypt-secrets.ts: sealedKeyStatus': 'cli/key-rotation.int.test.ts',
};

const listFilters: RunListFilters = {
  configName: 'c',
  q: ['q'],
  metadata: { k: 'v' },
  states: ['QUEUED'],
  environmentId: 'e',
  ancestorRunId: '0b7d9c3e-5f6a-4b1c-8d2e-3f4a5b6c7d8e',
  artifactType: 'PLAN',
  modelId: 'm',
  creatorId: 'u',
  executorId: 'a',
  source: 'API',
  executionLocation: 'REMOTE',
  createdAfter: '2026-01-01T00:00:00Z',
  createdBefore: '2026-01-01T00:00:00Z',
  updatedAfter: '2026-01-01T00:00:00Z',
  skillSpec: 's',
  scheduleId: 's',
  automationId: 'a',
  factoryUid: 'f',
};

/** The run-time builders' statements, with every optional fragment in. */
const builtStatements = (): Statement[] => [
  { where: 'pendingEntries', sql: pendingEntries(10).text },
  { where: 'artifactProbe', sql: artifactProbe('PLAN').text },
  ...(['exists', 'ids'] as const).flatMap((artifactStrategy) =>
    (['skill', 'none'] as const).map((section) => ({
      where: `pageQuery ${artifactStrategy} ${section}`,
      sql: pageQuery({
        teamId: 't',
        filters: listFilters,
        sortBy: 'agent',
        sortOrder: 'asc',
        cursor: { sortBy: 'agent', sortOrder: 'asc', value: 's', id: listFilters.ancestorRunId! },
        take: 5,
        section,
        artifactStrategy,
      }).text,
    })),
  ),
];

interface Statement {
  where: string;
  sql: string;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'test-support' ? [] : sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

/** A tagged template as the statement Prisma sends: each `${…}` becomes a numbered parameter. */
function templateSql(template: ts.TemplateLiteral): string {
  if (ts.isNoSubstitutionTemplateLiteral(template)) return template.text;
  return template.templateSpans.reduce(
    (sql, span, i) => `${sql}$${i + 1}${span.literal.text}`,
    template.head.text,
  );
}

/** A template with a Prisma.Sql fragment in it (an identifier, a join) is assembled at run time. */
const hasFragments = (template: ts.TemplateLiteral): boolean =>
  ts.isTemplateExpression(template) &&
  template.templateSpans.some((span) => /\b(ident|Prisma\.\w+)\(/.test(span.expression.getText()));

function enclosingFunction(node: ts.Node): string {
  for (let at: ts.Node | undefined = node; at; at = at.parent)
    if ((ts.isFunctionDeclaration(at) || ts.isMethodDeclaration(at)) && at.name) return at.name.getText();
  return '?';
}

/** Whether `expression` is a pool from `sqlPool(…)`: the call itself or a variable it was assigned to. */
const isSqlPool = (expression: ts.Expression, aliases: Set<string>): boolean =>
  expression.getText().startsWith('sqlPool(') ||
  (ts.isIdentifier(expression) && aliases.has(expression.text));

/**
 * One file's raw statements: `statements` written inline, `built` at run time, and `constants` — the names of the
 * constants sent through `sqlPool(…).query`, directly or through a variable holding the pool.
 */
function scanSource(
  file: string,
  text: string,
): { statements: Statement[]; built: string[]; constants: string[] } {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const statements: Statement[] = [];
  const built: string[] = [];
  const constants: string[] = [];
  const aliases = new Set<string>();
  const visit = (node: ts.Node): void => {
    const line = source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
    if (
      ts.isTaggedTemplateExpression(node) &&
      ts.isPropertyAccessExpression(node.tag) &&
      RAW_TAGS.has(node.tag.name.text)
    ) {
      if (hasFragments(node.template)) built.push(`${file}: ${enclosingFunction(node)}`);
      else statements.push({ where: `${file}:${line}`, sql: templateSql(node.template) });
    } else if (
      ts.isVariableDeclaration(node) &&
      ts.isIdentifier(node.name) &&
      node.initializer?.getText().startsWith('sqlPool(')
    ) {
      aliases.add(node.name.text);
    } else if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
      const method = node.expression.name.text;
      const [first] = node.arguments;
      if (RAW_TAGS.has(method) || method.endsWith('Unsafe'))
        built.push(
          `${file}: ${first && ts.isCallExpression(first) ? first.expression.getText() : first?.getText()}`,
        );
      else if (method === 'query' && isSqlPool(node.expression.expression, aliases))
        constants.push(first?.getText() ?? '?');
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return { statements, built, constants };
}

async function rawStatements(): Promise<{ statements: Statement[]; built: string[] }> {
  const statements: Statement[] = [];
  const built: string[] = [];
  for (const path of sourceFiles(SRC)) {
    const file = relative(SRC, path);
    const scanned = scanSource(file, readFileSync(path, 'utf8'));
    statements.push(...scanned.statements);
    built.push(...scanned.built);
    const { constants } = scanned;
    if (constants.length === 0) continue;
    // The statements sent through sqlPool are exported constants of the same file.
    const module = (await import(path)) as Record<string, unknown>;
    for (const name of constants) {
      const sql = module[name];
      if (typeof sql !== 'string') throw new Error(`${file}: ${name} is not an exported SQL constant`);
      statements.push({ where: `${file}: ${name}`, sql });
    }
  }
  return { statements, built };
}

describe("the orchestrator's raw SQL against the migrated schema", () => {
  let database: TestDatabase;
  let pg: Client;

  beforeAll(async () => {
    database = await createTestDatabase();
    pg = new Client({ connectionString: database.url });
    await pg.connect();
  });

  afterAll(async () => {
    await pg.end();
    await database.drop();
  });

  it('finds the raw statements, and names the test of each one built at run time', async () => {
    const { statements, built } = await rawStatements();
    // A floor, so a scanner that stopped finding statements cannot pass by checking none (25 when written).
    expect(statements.length).toBeGreaterThanOrEqual(25);
    expect(statements.map((s) => s.where)).toEqual(
      expect.arrayContaining([
        'runner/claim-run.ts: CLAIM_SQL',
        'runner/report-events.ts: REPORT_SQL',
        'runner/complete-run.ts: COMPLETE_SQL',
      ]),
    );
    expect([...new Set(built)].sort()).toEqual(Object.keys(BUILT_AT_RUN_TIME).sort());
    for (const [where, test] of Object.entries(BUILT_AT_RUN_TIME))
      expect(existsSync(join(SRC, test)) ? test : `${where}: no ${test}`).toBe(test);
  });

  it('sees the statements sent through a variable holding the pool, not only through sqlPool(…) itself', () => {
    const scanned = scanSource(
      'sample.ts',
      'async function f(db) { const pool = sqlPool(db); await pool.query(A_SQL); await sqlPool(db).query(B_SQL); }',
    );
    expect(scanned.constants).toEqual(['A_SQL', 'B_SQL']);
  });

  it('has PostgreSQL parse and plan every one of them', async () => {
    const statements = [...(await rawStatements()).statements, ...builtStatements()];
    const refused: string[] = [];
    for (const statement of statements) {
      try {
        await pg.query(`PREPARE raw_sql_check AS ${statement.sql}`);
        await pg.query('DEALLOCATE raw_sql_check');
      } catch (error) {
        refused.push(`${statement.where}: ${(error as Error).message}`);
      }
    }
    expect(refused).toEqual([]);
  });
});
