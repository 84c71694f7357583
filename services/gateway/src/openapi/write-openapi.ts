import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { buildApiDocument } from './api-document';

/**
 * Regenerates the checked-in copy (`openapi/openapi.json`) from the schemas; `--check` fails instead of writing
 * when the copy is stale (run by `npm test`). Usage: `npm run openapi -w @conveyor/gateway [-- --check]`.
 */
const target = resolve(__dirname, '../../openapi/openapi.json');
const generated = `${JSON.stringify(buildApiDocument(), null, 2)}\n`;
if (process.argv.includes('--check')) {
  let current = '';
  try {
    current = readFileSync(target, 'utf8');
  } catch {
    // missing counts as stale
  }
  if (current !== generated) {
    process.stderr.write(`${target} is stale: run \`npm run openapi -w @conveyor/gateway\` and commit it\n`);
    process.exit(1);
  }
} else {
  writeFileSync(target, generated);
}
