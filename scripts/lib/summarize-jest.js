// Sums every workspace's jest JSON report into one closing line: "tests: N passed, N failed".
const fs = require('node:fs');
const path = require('node:path');

const root = process.argv[2];
let passed = 0;
let failed = 0;
let suites = 0;
const missing = [];
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
  }
}
if (missing.length) console.log(`no test report from: ${missing.join(', ')}`);
console.log(`test suites: ${suites}`);
console.log(`tests: ${passed} passed, ${failed} failed`);
process.exit(failed > 0 || missing.length > 0 || passed === 0 ? 1 : 0);
