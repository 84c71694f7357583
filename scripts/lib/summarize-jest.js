// Sums every workspace's jest JSON report into one closing line: "tests: N passed, N failed", after naming each failed
// test with the head of its failure message: CI shows only the tail of its log, where turbo's interleaved output
// says no more than which file failed.
const fs = require('node:fs');
const path = require('node:path');

const root = process.argv[2];
let passed = 0;
let failed = 0;
let suites = 0;
let brokenSuites = 0;
const missing = [];
const failures = [];
/** Lines of one failure message kept: enough for an assertion's diff or a thrown error's stack head. */
const FAILURE_LINES = 40;
const plain = (text) => text.replace(/\x1b\[[0-9;]*m/g, '');
const head = (text) => plain(text).split('\n').slice(0, FAILURE_LINES).join('\n');
for (const group of ['packages', 'services', 'tests']) {
  for (const name of fs.readdirSync(path.join(root, group))) {
    const dir = path.join(root, group, name);
    if (!fs.existsSync(path.join(dir, 'jest.config.js'))) continue;
    // Suites run on demand (tests/kubernetes: `npm run test:kubernetes`) have no `test` script.
    if (!JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')).scripts?.test) continue;
    const file = path.join(dir, '.jest-results.json');
    if (!fs.existsSync(file)) {
      missing.push(`${group}/${name}`);
      continue;
    }
    const report = JSON.parse(fs.readFileSync(file, 'utf8'));
    passed += report.numPassedTests;
    failed += report.numFailedTests;
    suites += report.numTotalTestSuites;
    for (const suite of report.testResults) {
      const file = path.relative(root, suite.name);
      const failedTests = suite.assertionResults.filter((test) => test.status === 'failed');
      for (const test of failedTests)
        failures.push(`${file} › ${test.fullName}\n${head(test.failureMessages.join('\n'))}`);
      // A suite that failed outside any test (it did not compile, a hook threw) has only its own message.
      if (suite.status === 'failed' && failedTests.length === 0) {
        brokenSuites += 1;
        failures.push(`${file} (the suite itself)\n${head(suite.message ?? '')}`);
      }
    }
  }
}
for (const failure of failures) console.log(`---- failed: ${failure}\n`);
if (missing.length) console.log(`no test report from: ${missing.join(', ')}`);
console.log(`test suites: ${suites}`);
console.log(`tests: ${passed} passed, ${failed} failed`);
process.exit(failed > 0 || brokenSuites > 0 || missing.length > 0 || passed === 0 ? 1 : 0);
