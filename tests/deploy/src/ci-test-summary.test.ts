import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

// `npm test` ends with scripts/lib/summarize-jest.js, and CI shows only the tail of its log: the summary must name
// each failed test and why, since turbo's interleaved output above it says no more than "FAIL <file>".
const SUMMARIZE = path.resolve(__dirname, '../../../scripts/lib/summarize-jest.js');

interface Workspace {
  group: string;
  name: string;
  report: object;
}

function summarize(workspaces: Workspace[]) {
  const root = mkdtempSync(path.join(tmpdir(), 'ci-summary-'));
  try {
    for (const group of ['packages', 'services', 'tests']) mkdirSync(path.join(root, group));
    for (const { group, name, report } of workspaces) {
      const dir = path.join(root, group, name);
      mkdirSync(dir);
      writeFileSync(path.join(dir, 'jest.config.js'), 'module.exports = {};');
      writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ scripts: { test: 'jest' } }));
      // Jest writes absolute file names into its report.
      const absolute = JSON.parse(JSON.stringify(report).replaceAll('<dir>', dir)) as object;
      writeFileSync(path.join(dir, '.jest-results.json'), JSON.stringify(absolute));
    }
    const run = spawnSync('node', [SUMMARIZE, root], { encoding: 'utf8' });
    return { status: run.status, out: run.stdout };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

const passing = {
  numPassedTests: 2,
  numFailedTests: 0,
  numTotalTestSuites: 1,
  testResults: [
    {
      name: '<dir>/src/fine.test.ts',
      status: 'passed',
      message: '',
      assertionResults: [
        { fullName: 'fine one', status: 'passed', failureMessages: [] },
        { fullName: 'fine two', status: 'passed', failureMessages: [] },
      ],
    },
  ],
};

describe("npm test's closing summary", () => {
  it('counts every workspace and exits 0 when all passed', () => {
    const { status, out } = summarize([{ group: 'services', name: 'a', report: passing }]);
    expect(status).toBe(0);
    expect(out).toContain('tests: 2 passed, 0 failed');
    expect(out).not.toContain('failed:');
  });

  it('names each failed test with the head of its message, colours stripped, before the closing line', () => {
    const diff = Array.from({ length: 100 }, (_, i) => `line ${i + 1}`).join('\n');
    const failing = {
      numPassedTests: 1,
      numFailedTests: 1,
      numTotalTestSuites: 1,
      testResults: [
        {
          name: '<dir>/src/faults.int.test.ts',
          status: 'failed',
          message: '',
          assertionResults: [
            { fullName: 'faults Kafka stopped', status: 'passed', failureMessages: [] },
            {
              fullName: 'faults runner SIGKILLed: every run ends with its own outcome',
              status: 'failed',
              failureMessages: [`\x1b[2mexpect(\x1b[0m\x1b[31mreceived\x1b[0m).toEqual([])\n${diff}`],
            },
          ],
        },
      ],
    };
    const { status, out } = summarize([
      { group: 'services', name: 'a', report: passing },
      { group: 'tests', name: 'chaos', report: failing },
    ]);
    expect(status).toBe(1);
    expect(out).toContain(
      '---- failed: tests/chaos/src/faults.int.test.ts › faults runner SIGKILLed: every run ends with its own outcome\n' +
        'expect(received).toEqual([])\nline 1\n',
    );
    expect(out).not.toContain('\x1b[');
    // Only the head of a long message: CI's tail must still reach the closing line.
    expect(out).toContain('line 39\n');
    expect(out).not.toContain('line 40\n');
    expect(out.indexOf('---- failed:')).toBeLessThan(out.indexOf('tests: 3 passed, 1 failed'));
  });

  it('names a suite that failed outside any test (a hook threw, it did not compile)', () => {
    const broken = {
      numPassedTests: 0,
      numFailedTests: 0,
      numTotalTestSuites: 1,
      testResults: [
        {
          name: '<dir>/src/broken.int.test.ts',
          status: 'failed',
          message: 'Test suite failed to run\n\nCannot find module x',
          assertionResults: [],
        },
      ],
    };
    const { status, out } = summarize([
      { group: 'services', name: 'a', report: passing },
      { group: 'services', name: 'b', report: broken },
    ]);
    expect(status).toBe(1);
    expect(out).toContain(
      '---- failed: services/b/src/broken.int.test.ts (the suite itself)\nTest suite failed to run',
    );
  });
});
