// The runner's Python programs (not their tests) go beside the compiled JavaScript that runs them: dist/ is what the
// images ship (deploy/Dockerfile, scripts/kubernetes/images.sh) and what `npm start` runs.
const { cpSync, statSync } = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..');
const shipped = (file) =>
  statSync(file).isDirectory()
    ? path.basename(file) !== 'test-support'
    : file.endsWith('.py') && !path.basename(file).startsWith('test_');
cpSync(path.join(root, 'src'), path.join(root, 'dist'), { recursive: true, filter: shipped });
